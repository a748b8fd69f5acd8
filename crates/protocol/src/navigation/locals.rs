//! Outlines without local symbols: what is declared inside a function's body.

use super::types::Symbol;

/// Whether the symbols inside a symbol of this kind are local to its body.
fn has_body(kind: &str) -> bool {
    matches!(kind, "function" | "method" | "constructor")
}

/// The outline without the symbols declared inside functions, methods and constructors
/// (nested ones dropped; in a flat outline, those whose container is one), and how many were
/// left out.
pub fn without_locals(symbols: &[Symbol]) -> (Vec<Symbol>, usize) {
    let bodies: Vec<&str> = symbols
        .iter()
        .filter(|symbol| has_body(&symbol.kind))
        .map(|symbol| symbol.name.as_str())
        .collect();
    let local = |symbol: &Symbol| {
        let container = symbol.container.as_deref().map(|c| c.rsplit('.').next());
        container.flatten().is_some_and(|c| bodies.contains(&c))
    };
    let mut left_out = 0;
    let mut kept = Vec::new();
    for symbol in symbols {
        if local(symbol) {
            left_out += count(std::slice::from_ref(symbol));
            continue;
        }
        let mut symbol = symbol.clone();
        if has_body(&symbol.kind) {
            left_out += count(&symbol.children);
            symbol.children.clear();
        } else {
            let (children, dropped) = without_locals(&symbol.children);
            symbol.children = children;
            left_out += dropped;
        }
        kept.push(symbol);
    }
    (kept, left_out)
}

/// How many symbols there are, nested ones included.
fn count(symbols: &[Symbol]) -> usize {
    symbols.iter().map(|s| 1 + count(&s.children)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::navigation::SymbolRange;

    fn symbol(name: &str, kind: &str, children: Vec<Symbol>) -> Symbol {
        Symbol {
            name: name.to_string(),
            kind: kind.to_string(),
            detail: None,
            file: "a.py".to_string(),
            line: 1,
            column: 1,
            end_line: 1,
            range: SymbolRange::at(1, 1),
            container: None,
            children,
        }
    }

    fn names(symbols: &[Symbol]) -> Vec<String> {
        let mut out = Vec::new();
        for s in symbols {
            out.push(s.name.clone());
            out.extend(
                names(&s.children)
                    .into_iter()
                    .map(|n| format!("{}.{n}", s.name)),
            );
        }
        out
    }

    #[test]
    fn symbols_inside_functions_and_methods_are_left_out_and_counted() {
        let outline = vec![
            symbol("LIMIT", "constant", Vec::new()),
            symbol(
                "Circle",
                "class",
                vec![
                    symbol("radius", "variable", Vec::new()),
                    symbol(
                        "area",
                        "method",
                        vec![
                            symbol("r2", "variable", Vec::new()),
                            symbol(
                                "helper",
                                "function",
                                vec![symbol("x", "variable", Vec::new())],
                            ),
                        ],
                    ),
                    symbol(
                        "__init__",
                        "constructor",
                        vec![symbol("y", "variable", Vec::new())],
                    ),
                ],
            ),
            symbol(
                "main",
                "function",
                vec![symbol("total", "variable", Vec::new())],
            ),
        ];
        let (kept, left_out) = without_locals(&outline);
        assert_eq!(
            names(&kept),
            vec![
                "LIMIT",
                "Circle",
                "Circle.radius",
                "Circle.area",
                "Circle.__init__",
                "main"
            ]
        );
        assert_eq!(left_out, 5);
    }

    #[test]
    fn a_flat_outline_leaves_out_what_a_function_contains() {
        let mut method = symbol("area", "method", Vec::new());
        method.container = Some("Circle".to_string());
        let mut local = symbol("r2", "variable", Vec::new());
        local.container = Some("Circle.area".to_string());
        let outline = vec![symbol("Circle", "class", Vec::new()), method, local];
        let (kept, left_out) = without_locals(&outline);
        assert_eq!(names(&kept), vec!["Circle", "area"]);
        assert_eq!(left_out, 1);
    }

    #[test]
    fn an_outline_without_functions_is_kept_whole() {
        let outline = vec![symbol("A", "class", vec![symbol("b", "field", Vec::new())])];
        assert_eq!(without_locals(&outline), (outline.clone(), 0));
    }
}
