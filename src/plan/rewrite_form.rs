//! The form a map takes in the source (a swizzle in place, a padded declaration, a map
//! function, a struct of arrays), and the names a rewrite introduces.
use super::*;

/// The form for `map`, in order of preference: a swizzle in place, a padded declaration, a
/// map function (flattening a multi-dimensional declaration).
pub(super) fn form(
    target: &Target,
    map: &dyn AddressMap,
    names: &mut Names,
) -> Result<Rewrite, String> {
    if let Some(layout) = map.struct_of_arrays() {
        let names = names.layouts.for_array(target.array, layout);
        return soa::struct_of_arrays(target, layout, names);
    }
    let extent = map.extent();
    let param = |name: &str| map.params()[name].as_u64();
    // The kernels that pass an array with one map to the same functions share the map
    // function and the copies (`fix_text` checks that the copies are the same).
    let reaches_calls = target.array.accesses.iter().any(|a| {
        a.detail()
            .via_pointer
            .as_ref()
            .is_some_and(|calls| !calls.is_empty())
    });
    // The map function spells the array's extents as written: arrays whose extents are
    // written differently (`TILE + 1`, `TILE + + 1`) cannot share its text, so they get
    // names of their own here rather than a name whose second text would be refused (and
    // taken by the next run, which would then fix what this one left).
    let shared = reaches_calls.then(|| {
        format!(
            "{}\n{}\n{}",
            target.array.name,
            map.cuda("i"),
            target.array.dim_texts.join("\n")
        )
    });
    // Accesses through pointers go through the map function: with no subscript of the array
    // itself, that is all the rewrite is.
    let subscripted = target
        .array
        .accesses
        .iter()
        .any(|a| a.detail().via_pointer.is_none());
    let in_place = match map.kind() {
        MapKind::Swizzle if subscripted => {
            let swizzle = (|| {
                Swizzle::new(
                    param("columns")?,
                    u32::try_from(param("bits")?).ok()?,
                    u32::try_from(param("base")?).ok()?,
                    u32::try_from(param("row_shift")?).ok()?,
                    extent,
                )
                .ok()
            })();
            swizzle.map(|s| {
                let name = target
                    .array
                    .accesses
                    .iter()
                    .any(|a| a.detail().via_pointer.is_some())
                    .then(|| {
                        names.name_for(
                            target.array.declarator_key(),
                            &target.array.name,
                            target.function,
                            &shared,
                        )
                    });
                swizzle_in_place(target, &s, name.as_deref().unwrap_or_default())
            })
        }
        MapKind::Padding if map.params()["declared_row"] == true => {
            let padding = (|| Padding::new(param("pitch")?, param("pad")?, true, extent).ok())();
            padding.map(|p| padded_declaration(target, &p))
        }
        _ => None,
    };
    let in_place_failure = match in_place {
        Some(Ok(rewrite)) => return Ok(rewrite),
        Some(Err(why)) => Some(why),
        None => None,
    };
    let name = names.name_for(
        target.array.declarator_key(),
        &target.array.name,
        target.function,
        &shared,
    );
    map_function(target, map, &name).map_err(|why| match in_place_failure {
        Some(first) => format!("{first}; and as a map function: {why}"),
        None => why,
    })
}

/// The names of map functions: `bankwise_<array>`, or `bankwise_<function>_<array>` when that
/// is taken, one per declaration (the instances of a template share theirs); and the names
/// of the arrays that replace an array stored as a struct of arrays.
pub(super) struct Names {
    taken: Vec<String>,
    by_declaration: HashMap<DeclaratorKey, String>,
    /// Array name and map → name, for arrays whose copies of functions can be shared.
    by_sharing: HashMap<String, String>,
    layouts: soa::Words,
}

impl Names {
    pub(super) fn new(text: &str) -> Self {
        let taken = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("bankwise_"))
            .map(str::to_string)
            .collect();
        Names {
            taken,
            by_declaration: HashMap::new(),
            by_sharing: HashMap::new(),
            layouts: soa::Words::new(text),
        }
    }

    fn name_for(
        &mut self,
        declarator: DeclaratorKey,
        array: &str,
        function: &str,
        shared: &Option<String>,
    ) -> String {
        if let Some(name) = self.by_declaration.get(&declarator) {
            return name.clone();
        }
        if let Some(name) = shared.as_ref().and_then(|key| self.by_sharing.get(key)) {
            let name = name.clone();
            self.by_declaration.insert(declarator, name.clone());
            return name;
        }
        let function: String = function
            .chars()
            .map(|c| if c.is_alphanumeric() { c } else { '_' })
            .collect();
        // A provider's array is named after its call (`SharedMemory<float>()`).
        let array = identifier(array);
        let mut candidates = vec![
            format!("bankwise_{array}"),
            format!("bankwise_{function}_{array}"),
        ];
        candidates.extend(
            (2..)
                .take(1000)
                .map(|n| format!("bankwise_{function}_{array}_{n}")),
        );
        let name = candidates
            .into_iter()
            .find(|c| !self.taken.contains(c))
            .unwrap_or_else(|| format!("bankwise_{function}_{array}_x"));
        self.taken.push(name.clone());
        self.by_declaration.insert(declarator, name.clone());
        if let Some(key) = shared {
            self.by_sharing.insert(key.clone(), name.clone());
        }
        name
    }
}

/// The line where a pointer is first made from `array`'s name in function `f` (a use of the
/// name the analysis followed), if one is.
pub(super) fn pointer_made_at(
    file: &dyn PlanInput,
    f: usize,
    array: &SharedArray,
    text: &str,
) -> Option<usize> {
    let function = file.parsed().functions[f].span;
    let affine = file.analysis(f).affine.as_ref()?;
    let start = affine
        .followed
        .iter()
        .filter(|use_| use_.start >= function.start && use_.end <= function.end)
        .filter(|use_| text.get(use_.start..use_.end) == Some(array.name.as_str()))
        .map(|use_| use_.start)
        .min()?;
    Some(text[..start].matches('\n').count() + 1)
}

/// The words of `text` joined by `_`: `SharedMemory<float>()` → `SharedMemory_float`.
fn identifier(text: &str) -> String {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}
