//! Reading `cuobjdump -sass`: each kernel's instructions, and which of them touch shared
//! memory.

/// One kernel's machine code, as counted here.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KernelCode {
    /// The kernel's name without its namespaces, template arguments or parameters
    /// (`tileSum` for `_Z7tileSumILi16EEvPf`).
    pub name: String,
    /// Instructions, NOPs left out.
    pub instructions: u32,
    /// Shared-memory loads, stores and atomics (`LDS*`, `STS*`, `ATOMS*`, `LDSM*`).
    pub shared: u32,
    /// Branches to an earlier instruction: the loops nvcc left rolled.
    pub loops: u32,
}

/// The kernels of a `cuobjdump -sass` listing, in its order.
pub(crate) fn kernels(listing: &str) -> Vec<KernelCode> {
    let mut kernels: Vec<KernelCode> = Vec::new();
    for line in listing.lines() {
        if let Some(symbol) = line.trim().strip_prefix("Function : ") {
            kernels.push(KernelCode {
                name: base_name(symbol.trim()),
                instructions: 0,
                shared: 0,
                loops: 0,
            });
            continue;
        }
        let (Some(kernel), Some((address, opcode, operands))) =
            (kernels.last_mut(), instruction(line))
        else {
            continue;
        };
        if opcode == "BRA" || opcode.starts_with("BRA.") {
            let target = operands
                .trim_start()
                .strip_prefix("0x")
                .map(|t| t.trim_end_matches([' ', ';']))
                .and_then(|t| u64::from_str_radix(t, 16).ok());
            // The branch to itself after the last EXIT is no loop.
            kernel.loops += u32::from(target.is_some_and(|t| t < address));
        }
        kernel.count(opcode);
    }
    kernels
}

/// An instruction line, `/*0040*/  @!P0 LDS.64 R2, [R5] ;  /* 0x… */`: its address, its
/// opcode (the first word after an optional predicate) and the operands up to `;`.
fn instruction(line: &str) -> Option<(u64, &str, &str)> {
    let rest = line.trim_start().strip_prefix("/*")?;
    let (address, rest) = rest.split_once("*/")?;
    let address = u64::from_str_radix(address, 16).ok()?;
    let rest = rest.split(';').next()?.trim_start();
    let rest = match rest.strip_prefix('@') {
        Some(predicated) => predicated.split_once(char::is_whitespace)?.1.trim_start(),
        None => rest,
    };
    let (opcode, operands) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    opcode
        .starts_with(|c: char| c.is_ascii_uppercase())
        .then_some((address, opcode, operands))
}

/// The unqualified name of an Itanium-mangled function (`_Z6kernelPf`, `_ZN5tiles4copyEv`
/// gives `copy`), or the symbol itself when it is not mangled (`extern "C"`).
pub(crate) fn base_name(symbol: &str) -> String {
    let Some(mut rest) = symbol.strip_prefix("_Z") else {
        return symbol.to_string();
    };
    let nested = rest.starts_with('N');
    if nested {
        rest = &rest[1..];
        // CV-qualifiers of a member function.
        rest = rest.trim_start_matches(['r', 'V', 'K']);
    }
    let mut last = None;
    // Bounded by the symbol's length: each step consumes at least one character.
    while let Some((name, after)) = source_name(rest) {
        last = Some(name);
        rest = after;
        if !nested {
            break;
        }
        // Template arguments of a component are skipped: only names are compared.
        if rest.starts_with('I') || rest.starts_with('E') {
            break;
        }
    }
    last.map_or_else(|| symbol.to_string(), str::to_string)
}

/// `<length><identifier>` at the start of `text`.
fn source_name(text: &str) -> Option<(&str, &str)> {
    let digits = text.find(|c: char| !c.is_ascii_digit())?;
    let length: usize = text[..digits].parse().ok()?;
    let name = text.get(digits..digits + length)?;
    Some((name, &text[digits + length..]))
}

/// Each kernel's code in an `nvdisasm -g -c` listing, counted as [`kernels`] counts a
/// `cuobjdump -sass` one (branches name labels there, not addresses).
pub(crate) fn nvdisasm_kernels(listing: &str) -> Vec<KernelCode> {
    let mut kernels: Vec<KernelCode> = Vec::new();
    let mut labels: Vec<(String, u64)> = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    for line in listing.lines() {
        let trimmed = line.trim();
        if let Some(section) = trimmed.strip_prefix(".section") {
            let name = section.trim().split(',').next().unwrap_or("");
            if let Some(symbol) = name.strip_prefix(".text.") {
                kernels.push(KernelCode {
                    name: base_name(symbol),
                    instructions: 0,
                    shared: 0,
                    loops: 0,
                });
                labels.clear();
                pending.clear();
            }
            continue;
        }
        if let Some(label) = trimmed.strip_suffix(':').filter(|l| l.starts_with(".L_")) {
            pending.push(label.to_string());
            continue;
        }
        let (Some(kernel), Some((address, opcode, operands))) =
            (kernels.last_mut(), instruction(line))
        else {
            continue;
        };
        labels.extend(pending.drain(..).map(|label| (label, address)));
        if opcode == "BRA" || opcode.starts_with("BRA.") {
            let target = operands
                .split(['(', ')'])
                .nth(1)
                .and_then(|label| labels.iter().find(|(l, _)| l == label))
                .map(|(_, at)| *at);
            // The branch to itself after the last EXIT is no loop.
            kernel.loops += u32::from(target.is_some_and(|t| t < address));
        }
        kernel.count(opcode);
    }
    kernels
}

impl KernelCode {
    /// Counts one instruction of the listing (NOPs are no instruction).
    fn count(&mut self, opcode: &str) {
        if opcode.starts_with("NOP") {
            return;
        }
        self.instructions += 1;
        self.shared += u32::from(is_shared(opcode));
    }
}

/// `LDS*`, `STS*`, `ATOMS*`, `LDSM*`.
fn is_shared(opcode: &str) -> bool {
    ["LDS", "STS", "ATOMS", "LDSM"]
        .iter()
        .any(|p| opcode == *p || opcode.strip_prefix(p).is_some_and(|r| r.starts_with('.')))
}

/// One shared-memory load or store of an `nvdisasm -g` listing.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct SharedSite {
    /// The source file and line the listing gives it.
    pub file: String,
    pub line: u32,
    pub store: bool,
    /// Bytes per lane.
    pub bytes: u32,
    /// The address without its constant offset (`R8`, `R0+UR4`).
    pub base: String,
    pub offset: i64,
    /// The basic block: raised at each label and after each branch.
    pub block: u32,
}

/// Each kernel's shared loads and stores in an `nvdisasm -g -c` listing, by symbol.
pub(crate) fn shared_sites(listing: &str) -> Vec<(String, Vec<SharedSite>)> {
    let mut functions: Vec<(String, Vec<SharedSite>)> = Vec::new();
    let (mut file, mut line, mut block) = (String::new(), 0u32, 0u32);
    for text in listing.lines() {
        let trimmed = text.trim();
        if let Some(section) = trimmed.strip_prefix(".section") {
            let name = section.trim().split(',').next().unwrap_or("");
            if let Some(symbol) = name.strip_prefix(".text.") {
                functions.push((symbol.to_string(), Vec::new()));
                block = 0;
            }
            continue;
        }
        if let Some(location) = trimmed.strip_prefix("//## File \"") {
            if let Some((path, rest)) = location.split_once('"') {
                file = path.to_string();
                line = rest
                    .trim_start_matches([',', ' '])
                    .strip_prefix("line")
                    .and_then(|n| n.trim().split(|c: char| !c.is_ascii_digit()).next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
            }
            continue;
        }
        if trimmed.starts_with(".L_") && trimmed.ends_with(':') {
            block += 1;
            continue;
        }
        let Some((_, opcode, operands)) = instruction(text) else {
            continue;
        };
        if opcode == "BRA" || opcode.starts_with("BRA.") {
            block += 1;
            continue;
        }
        let store = opcode == "STS" || opcode.starts_with("STS.");
        if !(store || opcode == "LDS" || opcode.starts_with("LDS.")) {
            continue;
        }
        let bytes = match opcode.split('.').nth(1) {
            Some("U8" | "S8") => 1,
            Some("U16" | "S16") => 2,
            Some("64") => 8,
            Some("128") => 16,
            _ => 4,
        };
        let Some(address) = operands
            .split_once('[')
            .and_then(|(_, rest)| rest.split_once(']'))
            .map(|(inside, _)| inside.replace(' ', ""))
        else {
            continue;
        };
        let (base, offset) = match address.rfind("+0x").or_else(|| address.rfind("+-0x")) {
            Some(at) => {
                let (negative, digits) = match address[at + 1..].strip_prefix('-') {
                    Some(rest) => (true, rest),
                    None => (false, &address[at + 1..]),
                };
                let value = i64::from_str_radix(digits.trim_start_matches("0x"), 16).unwrap_or(0);
                (
                    address[..at].to_string(),
                    if negative { -value } else { value },
                )
            }
            None if address.starts_with("0x") => (
                String::new(),
                i64::from_str_radix(&address[2..], 16).unwrap_or(0),
            ),
            None => (address.clone(), 0),
        };
        if let Some((_, sites)) = functions.last_mut() {
            sites.push(SharedSite {
                file: file.clone(),
                line,
                store,
                bytes,
                base,
                offset,
                block,
            });
        }
    }
    functions
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "
\tcode for sm_90
\t\tFunction : _Z7tileSumILi16EEvPf
\t.headerflags\t@\"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                   /* 0x00000a00ff017b82 */
        /*0010*/                   S2R R0, SR_TID.X ;                        /* 0x0000000000007919 */
        /*0020*/                   STS [R0], R2 ;                            /* 0x0000000200007388 */
        /*0030*/              @!P0 LDS.64 R4, [R0+0x8] ;                     /* 0x0000080000048984 */
        /*0040*/                   ATOMS.ADD RZ, [R0], R3 ;                  /* 0x000000030000738c */
        /*0050*/              @P1 BRA 0x10 ;                                 /* 0xfffffffc00fc7947 */
        /*0058*/                   BRA 0x58;                                 /* 0xfffffffc00fc7947 */
        /*0060*/                   NOP;                                      /* 0x0000000000007918 */
\t\t..........
\t\tFunction : _ZN5tiles8loadRowsEPKf
        /*0000*/                   LDSM.16.M88.4 R4, [R2] ;                  /* 0x000000000204783b */
        /*0010*/                   EXIT ;                                    /* 0x000000000000794d */
";

    #[test]
    fn instructions_and_shared_accesses_are_counted_per_kernel() {
        assert_eq!(
            kernels(LISTING),
            vec![
                KernelCode {
                    name: "tileSum".to_string(),
                    instructions: 7,
                    shared: 3,
                    loops: 1,
                },
                KernelCode {
                    name: "loadRows".to_string(),
                    instructions: 2,
                    shared: 1,
                    loops: 0,
                },
            ]
        );
    }

    #[test]
    fn mangled_names_give_their_last_component() {
        assert_eq!(base_name("_Z6kernelPf"), "kernel");
        assert_eq!(base_name("_ZN5tiles4copyEv"), "copy");
        assert_eq!(base_name("_ZN2ns5outer5innerILi4EEEvv"), "inner");
        assert_eq!(base_name("plain_c_kernel"), "plain_c_kernel");
        assert_eq!(base_name("_Z"), "_Z");
        assert_eq!(base_name("_Z99short"), "_Z99short");
    }

    #[test]
    fn shared_loads_and_stores_are_read_with_their_lines_widths_and_blocks() {
        let listing = r#"
	.section	.text._Z8vecPairsPKfPf,"ax",@progbits
	//## File "<input>", line 72
        /*0160*/                   STS.64 [R0], R4 ;
	//## File "<input>", line 77
        /*0190*/                   LDS.64 R10, [R8] ;
        /*01a0*/              @!P0 LDS.U8 R12, [R8+-0x8] ;
        /*01b0*/                   BRA `(.L_x_1) ;
.L_x_1:
        /*01c0*/                   LDS.128 R4, [R2+UR4+0x10] ;
	.section	.text._Z5otherv,"ax",@progbits
        /*0000*/                   STS [0x40], R1 ;
"#;
        let functions = shared_sites(listing);
        let names: Vec<&str> = functions.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["_Z8vecPairsPKfPf", "_Z5otherv"]);
        let summary: Vec<(u32, bool, u32, &str, i64, u32)> = functions[0]
            .1
            .iter()
            .map(|s| (s.line, s.store, s.bytes, s.base.as_str(), s.offset, s.block))
            .collect();
        assert_eq!(
            summary,
            [
                (72, true, 8, "R0", 0, 0),
                (77, false, 8, "R8", 0, 0),
                (77, false, 1, "R8", -8, 0),
                (77, false, 16, "R2+UR4", 16, 2),
            ]
        );
        assert_eq!(functions[0].1[0].file, "<input>");
        assert_eq!(functions[1].1[0].base, "");
        assert_eq!(functions[1].1[0].offset, 64);
    }

    #[test]
    fn nvdisasm_listings_are_counted_as_cuobjdump_ones() {
        let listing = r#"
	.section	.text._Z7tileSumILi16EEvPf,"ax",@progbits
.L_x_0:
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   STS [R0], R2 ;
.L_x_1:
        /*0020*/              @!P0 LDS.64 R4, [R0+0x8] ;
        /*0030*/                   ATOMS.ADD RZ, [R0], R3 ;
        /*0040*/              @P1 BRA `(.L_x_1) ;
        /*0050*/              @P2 BRA `(.L_x_2) ;
.L_x_2:
        /*0060*/                   EXIT ;
.L_x_3:
        /*0070*/                   BRA `(.L_x_3);
        /*0080*/                   NOP;
	.section	.text._ZN5tiles8loadRowsEPKf,"ax",@progbits
        /*0000*/                   LDSM.16.M88.4 R4, [R2] ;
        /*0010*/                   LDSTS R4, [R2] ;
"#;
        assert_eq!(
            nvdisasm_kernels(listing),
            [
                KernelCode {
                    name: "tileSum".to_string(),
                    instructions: 8,
                    shared: 3,
                    loops: 1,
                },
                KernelCode {
                    name: "loadRows".to_string(),
                    instructions: 2,
                    shared: 1,
                    loops: 0,
                },
            ]
        );
    }
}
