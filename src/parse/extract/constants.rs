//! Integer constants, at file scope and in function bodies, and what else a body declares
//! that evaluation needs (`dim3` variables, `__shared__` declarations).
use super::walk::{named_children, Preorder};
use super::{has_qualifier, leftmost_identifier, Extractor};
use crate::parse::ast::{self, Expr, ExprKind, Span};
use crate::parse::consts::Bindings;
use crate::parse::symbols::{self, child, children_in, FIELDS};
use crate::parse::syntax::Node;
use std::collections::{HashMap, HashSet};

impl<'s> Extractor<'s> {
    /// The integer variables `node` declares with an initializer, when they are
    /// `const`/`constexpr` or never assigned afterwards (`reassigned`), as `(name, value)`.
    pub(super) fn integer_definitions(
        &self,
        node: Node,
        reassigned: &HashSet<String>,
    ) -> Vec<(String, Expr)> {
        let mut definitions = Vec::new();
        let Some(ty) = child(node, FIELDS.type_) else {
            return definitions;
        };
        if !is_integer_type(&self.one_line(ty)) {
            return definitions;
        }
        let constant =
            has_qualifier(node, self.src, "const") || has_qualifier(node, self.src, "constexpr");
        for declarator in children_in(node, FIELDS.declarator) {
            if symbols::kind(declarator) != "init_declarator" {
                continue;
            }
            let (Some(name), Some(value)) = (
                child(declarator, FIELDS.declarator),
                child(declarator, FIELDS.value),
            ) else {
                continue;
            };
            if symbols::kind(name) != "identifier" {
                continue;
            }
            let name = self.text(name).to_string();
            if !constant && reassigned.contains(&name) {
                continue;
            }
            let value = match symbols::kind(value) {
                "initializer_list" | "argument_list" => match named_children(value).as_slice() {
                    [only] => *only,
                    _ => continue,
                },
                _ => value,
            };
            definitions.push((name, ast::lower(value, self.src)));
        }
        definitions
    }

    /// `base` plus the constants of `definitions` that evaluate, in order.
    pub(super) fn bind_constants(
        &self,
        definitions: &[(String, Expr)],
        base: &Bindings,
    ) -> Bindings {
        let mut scope = base.clone();
        for (name, value) in definitions {
            if let Ok(v) = self.env.eval(value, &scope) {
                scope.ints.insert(name.clone(), v);
            }
        }
        scope
    }

    /// What a function body declares that evaluation needs: integer constants (in order,
    /// unevaluated, so a template can bind them per instantiation), `dim3` variables, and the
    /// `__shared__` declarations, direct or through a macro. `dead` branches are skipped.
    /// With `visible_at`, only the declarations in scope at that byte are taken (a launch in
    /// one branch sees its own `dim3 block(192)`, not the `dim3 block(256)` of another).
    pub(super) fn local_definitions<'t>(
        &self,
        body: &Preorder<'t>,
        dead: &[std::ops::Range<usize>],
        visible_at: Option<usize>,
    ) -> LocalDefinitions<'t> {
        let mut reassigned = HashSet::new();
        let mut component_sets: Vec<ComponentSet> = Vec::new();
        let mut declarations = Vec::new();
        let mut shared = Vec::new();
        let mut shared_macro_calls = Vec::new();
        // `name = value;` before `visible_at`, in its scope: the value from there on.
        let mut rebindings = Vec::new();
        // Assignments after `visible_at` in a loop around it, and that loop.
        let mut loop_carried = Vec::new();
        body.walk(|node| {
            if dead.iter().any(|r| r.contains(&node.start_byte())) {
                return false;
            }
            match symbols::kind(node) {
                "assignment_expression" | "update_expression" => {
                    if let Some(set) = self.component_set(node) {
                        component_sets.push(set);
                        return true;
                    }
                    let target = child(node, FIELDS.left).or_else(|| child(node, FIELDS.argument));
                    let Some(target) = target else {
                        return true;
                    };
                    let root = leftmost_identifier(target, self.src).to_string();
                    match visible_at.map(|at| assignment_seen_at(node, at)) {
                        Some(Seen::Not) => {}
                        Some(Seen::Rebinds) => match self.rebinding(node) {
                            Some((name, value)) => {
                                rebindings.push((node, Event::Rebinding(name, value)));
                            }
                            None => rebindings.push((node, Event::Maybe(root))),
                        },
                        // On some paths before the launch: unknown until the next rebinding.
                        Some(Seen::OnSomePaths) => rebindings.push((node, Event::Maybe(root))),
                        Some(Seen::CarriedBy(around)) => loop_carried.push((root, around)),
                        None => {
                            reassigned.insert(root);
                        }
                    }
                }
                "declaration" if has_qualifier(node, self.src, "__shared__") => shared.push(node),
                "declaration" if visible_at.is_none_or(|at| in_scope_at(node, at)) => {
                    declarations.push(node)
                }
                "call_expression" => {
                    let declares = child(node, FIELDS.function)
                        .and_then(|f| self.env.macro_named(self.text(f)))
                        .is_some_and(|mac| mac.body.contains("__shared__"));
                    if declares {
                        shared_macro_calls.push(node);
                    }
                }
                _ => {}
            }
            true
        });
        // A value set later in a loop reaches the launch on the next iteration, unless the
        // name is declared in that loop (each iteration starts from its declaration).
        for (name, around) in loop_carried {
            let declared_inside = declarations.iter().any(|d| {
                around.contains(&d.start_byte())
                    && children_in(*d, FIELDS.declarator)
                        .into_iter()
                        .any(|declarator| leftmost_identifier(declarator, self.src) == name)
            });
            if !declared_inside {
                reassigned.insert(name);
            }
        }
        let mut constants = Vec::new();
        let mut dim3s = HashMap::new();
        // A name declared as two different dim3s in two scopes (`dim3 block(192)` in one
        // branch, `dim3 block(256)` in another): which one a launch sees depends on where it
        // is, so neither. The same declaration repeated in several branches is one shape.
        let mut dim3_declarators: HashMap<String, HashSet<String>> = HashMap::new();
        for declaration in &declarations {
            if self.declares_dim3(*declaration) {
                for declarator in children_in(*declaration, FIELDS.declarator) {
                    let name = leftmost_identifier(declarator, self.src).to_string();
                    let written = self.one_line(declarator);
                    dim3_declarators.entry(name).or_default().insert(written);
                }
            }
        }
        // Declarations and rebindings in the order they run.
        let mut events: Vec<(Node, Event)> = declarations
            .iter()
            .map(|d| (*d, Event::Declaration))
            .collect();
        events.extend(rebindings);
        events.sort_by_key(|(node, _)| node.start_byte());
        let mut integer_names = HashSet::new();
        for (node, event) in events {
            if let Event::Maybe(name) = event {
                dim3s.remove(&name);
                constants.retain(|(n, _)| *n != name);
                continue;
            }
            if let Event::Rebinding(name, value) = event {
                if reassigned.contains(&name) {
                    continue;
                }
                if dim3_declarators.contains_key(&name) {
                    if component_sets.iter().any(|s| s.name == name) {
                        dim3s.remove(&name);
                    } else {
                        dim3s.insert(name, self.dim3_args(value));
                    }
                } else if integer_names.contains(&name) {
                    constants.push((name, ast::lower(value, self.src)));
                }
                continue;
            }
            let declaration = node;
            let integers = self.integer_definitions(declaration, &reassigned);
            integer_names.extend(integers.iter().map(|(name, _)| name.clone()));
            constants.extend(integers);
            if !self.declares_dim3(declaration) {
                continue;
            }
            for declarator in children_in(declaration, FIELDS.declarator) {
                let declared = match symbols::kind(declarator) {
                    // `dim3 block;`, its components set afterwards.
                    "identifier" => Some((declarator, Vec::new())),
                    // `dim3 threads(BX, BY);` reads as a function declaration.
                    "function_declarator" => self.vexing_dim3(declarator),
                    _ => None,
                };
                if let Some((name, args)) = declared {
                    let name = self.text(name).to_string();
                    if reassigned.contains(&name) {
                        continue;
                    }
                    if let Some(args) = set_components(args, &name, declaration, &component_sets) {
                        dim3s.insert(name, args);
                    }
                    continue;
                }
                let (Some(name), Some(value)) = (
                    child(declarator, FIELDS.declarator),
                    child(declarator, FIELDS.value),
                ) else {
                    continue;
                };
                let name = self.text(name).to_string();
                if reassigned.contains(&name) || component_sets.iter().any(|s| s.name == name) {
                    continue;
                }
                dim3s.insert(name, self.dim3_args(value));
            }
        }
        if visible_at.is_some() {
            // The declarations in scope are those of one path: the innermost one wins.
            return LocalDefinitions {
                constants,
                dim3s,
                shared,
                shared_macro_calls,
            };
        }
        dim3s.retain(|name: &String, _| {
            dim3_declarators
                .get(name)
                .is_none_or(|written| written.len() == 1)
        });
        LocalDefinitions {
            constants,
            dim3s,
            shared,
            shared_macro_calls,
        }
    }
}

impl Extractor<'_> {
    /// The components of a `dim3` from the value it is given: `dim3(a, b)`, `{a, b}`, `(a, b)`
    /// or one expression.
    fn dim3_args(&self, value: Node) -> Vec<Expr> {
        match symbols::kind(value) {
            "argument_list" | "initializer_list" => named_children(value)
                .into_iter()
                .map(|a| ast::lower(a, self.src))
                .collect(),
            // `dim3(…)`'s arguments; another call (`SoftMax_getBlockSize(ILP, n)`) returns
            // the whole dim3, and its arguments are not the components.
            _ => match ast::lower(value, self.src).kind {
                ExprKind::Call { callee, args, .. } if matches!(&callee.kind, ExprKind::Name(n) if n == "dim3") => {
                    args.into_vec()
                }
                other => vec![Expr {
                    kind: other,
                    span: Span::of(value),
                }],
            },
        }
    }

    /// `name = value;` as a statement of its own: the name and the value.
    fn rebinding<'t>(&self, assignment: Node<'t>) -> Option<(String, Node<'t>)> {
        let target = child(assignment, FIELDS.left)?;
        let value = child(assignment, FIELDS.right)?;
        let plain = symbols::kind(assignment) == "assignment_expression"
            && symbols::kind(target) == "identifier"
            && child(assignment, FIELDS.operator).is_some_and(|o| self.text(o) == "=")
            && assignment
                .parent()
                .is_some_and(|p| symbols::kind(p) == "expression_statement");
        plain.then(|| (self.text(target).to_string(), value))
    }

    /// `dim3 block…;`, or `auto block = dim3(32, 8);` (every declarator a `dim3`).
    fn declares_dim3(&self, declaration: Node) -> bool {
        match child(declaration, FIELDS.type_).map(|t| self.text(t)) {
            Some("dim3") => true,
            Some("auto") => children_in(declaration, FIELDS.declarator)
                .into_iter()
                .all(|d| {
                    child(d, FIELDS.value).is_some_and(|v| {
                        let value = self.text(v);
                        value.starts_with("dim3(") || value.starts_with("dim3{")
                    })
                }),
            _ => false,
        }
    }

    /// `dim3 threads(BX, BY);`: C++'s grammar reads a function declaration whose parameters
    /// have the types `BX` and `BY` (the "most vexing parse"); where no type has those names,
    /// they are the `dim3`'s components. The declared name and the components.
    fn vexing_dim3<'t>(&self, declarator: Node<'t>) -> Option<(Node<'t>, Vec<Expr>)> {
        let name = child(declarator, FIELDS.declarator)?;
        let parameters = child(declarator, FIELDS.parameters)?;
        let mut args = Vec::new();
        for parameter in named_children(parameters) {
            let ty = child(parameter, FIELDS.type_)?;
            // `BX`, or a qualified constant `cfg::kTile`, `Policy::kRows`.
            let plain = symbols::kind(parameter) == "parameter_declaration"
                && child(parameter, FIELDS.declarator).is_none()
                && matches!(
                    symbols::kind(ty),
                    "type_identifier" | "qualified_identifier"
                );
            let component = self.text(ty);
            if !plain || self.env.types.layout(component).is_some() {
                return None;
            }
            args.push(Expr {
                kind: ExprKind::Name(component.to_string()),
                span: Span::of(ty),
            });
        }
        (symbols::kind(name) == "identifier" && (1..=3).contains(&args.len()))
            .then_some((name, args))
    }

    /// `block.x = E;` as a statement of its own: one component of a `dim3` set.
    fn component_set<'t>(&self, assignment: Node<'t>) -> Option<ComponentSet<'t>> {
        let target = child(assignment, FIELDS.left)?;
        let value = child(assignment, FIELDS.right)?;
        let operator = child(assignment, FIELDS.operator)?;
        let statement = assignment.parent()?;
        let base = child(target, FIELDS.argument)?;
        let field = child(target, FIELDS.field)?;
        let component = ["x", "y", "z"]
            .iter()
            .position(|c| *c == self.text(field))?;
        let plain = self.text(operator) == "="
            && symbols::kind(target) == "field_expression"
            && symbols::kind(base) == "identifier"
            && symbols::kind(statement) == "expression_statement";
        plain.then(|| ComponentSet {
            name: self.text(base).to_string(),
            component,
            value: ast::lower(value, self.src),
            statement,
        })
    }
}

/// Whether the names `declaration` declares are in scope at byte `at`: declared before it, in
/// a scope that holds it.
fn in_scope_at(declaration: Node, at: usize) -> bool {
    if declaration.start_byte() > at {
        return false;
    }
    let mut node = declaration;
    while let Some(parent) = node.parent() {
        if is_scope(symbols::kind(parent))
            && !(parent.start_byte()..parent.end_byte()).contains(&at)
        {
            return false;
        }
        node = parent;
    }
    true
}

/// What a statement does to the names in scope at a launch, in the order they run.
enum Event<'t> {
    Declaration,
    /// `name = value;` on every path: the name and the value.
    Rebinding(String, Node<'t>),
    /// The name is assigned on some paths only: its value is unknown from here.
    Maybe(String),
}

/// How an assignment bears on the value a name has at some point of the function.
enum Seen {
    /// It runs after that point and cannot flow back to it.
    Not,
    /// It runs before that point on every path to it: the value from there on.
    Rebinds,
    /// It runs before that point on some paths only (a branch).
    OnSomePaths,
    /// It runs after that point in a loop around both, whose bytes these are: the next
    /// iteration sees it (unless the name is declared in that loop, which then starts each
    /// iteration, in every loop around it too, afresh).
    CarriedBy(std::ops::Range<usize>),
}

fn is_loop(kind: &str) -> bool {
    matches!(
        kind,
        "for_statement" | "for_range_loop" | "while_statement" | "do_statement"
    )
}

/// How `assignment` bears on the values at byte `at`.
fn assignment_seen_at(assignment: Node, at: usize) -> Seen {
    if assignment.start_byte() < at {
        return if in_scope_at(assignment, at) {
            Seen::Rebinds
        } else {
            Seen::OnSomePaths
        };
    }
    let mut node = assignment;
    while let Some(parent) = node.parent() {
        let around = parent.start_byte()..parent.end_byte();
        if is_loop(symbols::kind(parent)) && around.contains(&at) {
            return Seen::CarriedBy(around);
        }
        node = parent;
    }
    Seen::Not
}

/// Node kinds that open a C++ scope for the names declared in them.
pub(super) fn is_scope(kind: &str) -> bool {
    matches!(
        kind,
        "compound_statement"
            | "for_statement"
            | "for_range_loop"
            | "lambda_expression"
            | "if_statement"
            | "while_statement"
            | "switch_statement"
            | "catch_clause"
    )
}

/// `block.x = E;`: see [`Extractor::component_set`].
struct ComponentSet<'t> {
    name: String,
    component: usize,
    value: Expr,
    statement: Node<'t>,
}

/// The components of `dim3 name` declared by `declaration` with `args` (none: `dim3 name;`),
/// with those set after it in the same block. `None` when a component is set more than
/// once, or somewhere else (in a branch or a loop, where its value is not the one launched).
fn set_components(
    mut args: Vec<Expr>,
    name: &str,
    declaration: Node,
    sets: &[ComponentSet],
) -> Option<Vec<Expr>> {
    let sets: Vec<&ComponentSet> = sets.iter().filter(|s| s.name == name).collect();
    let block = declaration.parent()?;
    for set in &sets {
        let in_block = set.statement.parent().is_some_and(|p| p.id() == block.id())
            && set.statement.start_byte() > declaration.end_byte();
        let once = sets.iter().filter(|s| s.component == set.component).count() == 1;
        if !in_block || !once {
            return None;
        }
    }
    let span = Span::of(declaration);
    while args.len() < 3 {
        args.push(Expr {
            kind: ExprKind::Int(1),
            span,
        });
    }
    for set in sets {
        args[set.component] = set.value.clone();
    }
    Some(args)
}

/// What a function body declares: see [`Extractor::local_definitions`].
pub(super) struct LocalDefinitions<'t> {
    pub(super) constants: Vec<(String, Expr)>,
    pub(super) dim3s: HashMap<String, Vec<Expr>>,
    pub(super) shared: Vec<Node<'t>>,
    /// Invocations of macros whose bodies declare `__shared__` arrays.
    pub(super) shared_macro_calls: Vec<Node<'t>>,
}

pub(super) fn is_integer_type(ty: &str) -> bool {
    // `static constexpr std::size_t`, `int const`, `unsigned long int`: the qualifiers and
    // `std::` say nothing about the value.
    let words: Vec<&str> = ty
        .split_whitespace()
        .map(|w| w.trim_start_matches("std::"))
        .filter(|w| {
            !matches!(
                *w,
                "static" | "const" | "constexpr" | "inline" | "volatile" | "signed"
            )
        })
        .collect();
    matches!(
        words.join(" ").as_str(),
        "" // `signed` alone
            | "int"
            | "unsigned"
            | "unsigned int"
            | "long"
            | "long int"
            | "unsigned long"
            | "unsigned long int"
            | "long long"
            | "long long int"
            | "unsigned long long"
            | "unsigned long long int"
            | "short"
            | "short int"
            | "unsigned short"
            | "size_t"
            | "ptrdiff_t"
            | "int8_t"
            | "uint8_t"
            | "int16_t"
            | "uint16_t"
            | "int32_t"
            | "uint32_t"
            | "int64_t"
            | "uint64_t"
            | "uint"
            | "auto"
    )
}
