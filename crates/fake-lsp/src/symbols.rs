//! Symbols computed from document text: a line `<kind> <name>` (kind: class, function, method,
//! constructor, variable, constant, field, interface, module) declares a symbol, nested by
//! indentation under the nearest less indented declaration above it.

use std::path::Path;

use serde_json::{json, Value};

use super::diagnose::Encoding;

/// A declaration found in a text.
#[derive(Debug, Clone, PartialEq)]
struct Declared {
    name: String,
    kind: u8,
    /// 0-based line.
    line: usize,
    /// Start and end of the name on its line, in the encoding's units.
    name_range: (usize, usize),
    /// The 0-based line where its block (the more indented lines after it) ends.
    last_line: usize,
    /// Length of the last line of its block, in the encoding's units.
    last_len: usize,
    indent: usize,
    children: Vec<Declared>,
}

/// The LSP kind number of a declaration keyword.
fn kind_of(word: &str) -> Option<u8> {
    Some(match word {
        "module" => 2,
        "class" => 5,
        "method" => 6,
        "field" => 8,
        "constructor" => 9,
        "interface" => 11,
        "function" => 12,
        "variable" => 13,
        "constant" => 14,
        _ => return None,
    })
}

/// The declarations of `text`, nested.
fn declarations(text: &str, encoding: Encoding) -> Vec<Declared> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut flat = Vec::new();
    for (number, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        let mut words = body.split_whitespace();
        let (Some(keyword), Some(name)) = (words.next(), words.next()) else {
            continue;
        };
        let Some(kind) = kind_of(keyword) else {
            continue;
        };
        let after = &body[keyword.len()..];
        let name_at = indent + keyword.len() + after.find(name).unwrap_or(0);
        let start = encoding.len(&line[..name_at]);
        // The block: the following lines that are blank or more indented.
        let mut last_line = number;
        for (next, text) in lines.iter().enumerate().skip(number + 1) {
            let trimmed = text.trim_start();
            if trimmed.is_empty() {
                continue;
            }
            if text.len() - trimmed.len() <= indent {
                break;
            }
            last_line = next;
        }
        flat.push(Declared {
            name: name.to_string(),
            kind,
            line: number,
            name_range: (start, start + encoding.len(name)),
            last_line,
            last_len: encoding.len(lines[last_line]),
            indent,
            children: Vec::new(),
        });
    }
    nest(flat)
}

/// Nests a flat list of declarations by indentation.
fn nest(flat: Vec<Declared>) -> Vec<Declared> {
    let mut roots: Vec<Declared> = Vec::new();
    let mut stack: Vec<Declared> = Vec::new();
    for declared in flat {
        while stack
            .last()
            .is_some_and(|top| top.indent >= declared.indent)
        {
            close(&mut stack, &mut roots);
        }
        stack.push(declared);
    }
    while !stack.is_empty() {
        close(&mut stack, &mut roots);
    }
    roots
}

/// Pops the innermost open declaration into its parent (or the roots).
fn close(stack: &mut Vec<Declared>, roots: &mut Vec<Declared>) {
    if let Some(done) = stack.pop() {
        match stack.last_mut() {
            Some(parent) => parent.children.push(done),
            None => roots.push(done),
        }
    }
}

fn range(start: (usize, usize), end: (usize, usize)) -> Value {
    json!({
        "start": {"line": start.0, "character": start.1},
        "end": {"line": end.0, "character": end.1},
    })
}

/// The `textDocument/documentSymbol` answer for `text`: nested DocumentSymbols.
pub fn document_symbols(text: &str, encoding: Encoding) -> Value {
    fn convert(declared: &Declared) -> Value {
        json!({
            "name": declared.name,
            "kind": declared.kind,
            "range": range((declared.line, 0), (declared.last_line, declared.last_len)),
            "selectionRange": range(
                (declared.line, declared.name_range.0),
                (declared.line, declared.name_range.1),
            ),
            "children": declared.children.iter().map(convert).collect::<Vec<_>>(),
        })
    }
    Value::Array(declarations(text, encoding).iter().map(convert).collect())
}

/// The `workspace/symbol` answer: SymbolInformation for each declaration whose name contains
/// `query` (ignoring case) in the `.fake` files under `root`, sorted by file.
pub fn workspace_symbols(root: &Path, query: &str, encoding: Encoding) -> Value {
    let mut files = Vec::new();
    fake_files(root, &mut files);
    files.sort();
    let query = query.to_lowercase();
    let mut out = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let uri = format!("file://{}", file.display());
        let mut found = Vec::new();
        flatten(&declarations(&text, encoding), None, &mut found);
        for (declared, container) in found {
            if !declared.name.to_lowercase().contains(&query) {
                continue;
            }
            let mut info = json!({
                "name": declared.name,
                "kind": declared.kind,
                "location": {"uri": uri, "range": range(
                    (declared.line, declared.name_range.0),
                    (declared.line, declared.name_range.1),
                )},
            });
            if let Some(container) = container {
                info["containerName"] = container.into();
            }
            out.push(info);
        }
    }
    Value::Array(out)
}

/// The answer to `textDocument/hover`: `the word WORD` for the word at the position.
pub fn hover(text: &str, line: usize, character: usize, encoding: Encoding) -> Value {
    let word = (text.split('\n').nth(line)).and_then(|l| word_at(l, character, encoding));
    match word {
        Some(word) => {
            json!({"contents": {"kind": "plaintext", "value": format!("the word {word}")}})
        }
        None => Value::Null,
    }
}

/// The `textDocument/definition` answer: the declarations in `text` (of `uri`) named like the
/// word at (`line`, `character`), as Locations.
pub fn definitions(
    uri: &str,
    text: &str,
    line: usize,
    character: usize,
    encoding: Encoding,
) -> Value {
    let Some(word) = text
        .split('\n')
        .nth(line)
        .and_then(|l| word_at(l, character, encoding))
    else {
        return json!([]);
    };
    let mut found = Vec::new();
    flatten(&declarations(text, encoding), None, &mut found);
    let locations: Vec<Value> = found
        .iter()
        .filter(|(declared, _)| declared.name == word)
        .map(|(declared, _)| {
            json!({"uri": uri, "range": range(
                (declared.line, declared.name_range.0),
                (declared.line, declared.name_range.1),
            )})
        })
        .collect();
    Value::Array(locations)
}

/// The identifier (letters, digits, `_`) at `character` (in the encoding's units) of `line`.
fn word_at(line: &str, character: usize, encoding: Encoding) -> Option<String> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut units = 0;
    let chars: Vec<char> = line.chars().collect();
    let at = chars.iter().position(|c| {
        let here = units;
        units += encoding.len(c.encode_utf8(&mut [0; 4]));
        here >= character
    })?;
    if !is_word(chars[at]) {
        return None;
    }
    let start = (0..at)
        .rev()
        .take_while(|&i| is_word(chars[i]))
        .last()
        .unwrap_or(at);
    let end = (at..chars.len())
        .take_while(|&i| is_word(chars[i]))
        .last()
        .unwrap_or(at);
    Some(chars[start..=end].iter().collect())
}

/// Every declaration with its container's name.
fn flatten(
    declared: &[Declared],
    container: Option<&str>,
    out: &mut Vec<(Declared, Option<String>)>,
) {
    for d in declared {
        out.push((d.clone(), container.map(String::from)));
        flatten(&d.children, Some(&d.name), out);
    }
}

/// The `.fake` files under `dir`, recursively (hidden folders skipped).
pub(super) fn fake_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        match entry.file_type() {
            Ok(kind) if kind.is_dir() && !hidden => fake_files(&path, out),
            Ok(kind) if kind.is_file() && path.extension().is_some_and(|e| e == "fake") => {
                out.push(path)
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_nest_by_indentation() {
        let text = "class Shape\n  method area\n    variable r\n\n  field name\nfunction area\nx = area()\n";
        let symbols = document_symbols(text, Encoding::Utf16);
        assert_eq!(symbols[0]["name"], "Shape");
        assert_eq!(symbols[0]["range"]["end"]["line"], 4);
        assert_eq!(symbols[0]["children"][0]["name"], "area");
        assert_eq!(symbols[0]["children"][0]["kind"], 6);
        assert_eq!(symbols[0]["children"][0]["children"][0]["name"], "r");
        assert_eq!(symbols[0]["children"][1]["name"], "name");
        assert_eq!(symbols[1]["name"], "area");
        assert_eq!(symbols[1]["selectionRange"]["start"]["character"], 9);
        assert_eq!(symbols.as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn definitions_are_the_declarations_named_like_the_word() {
        let text = "function area\nclass C\n  method area\nx = area()\n";
        let found = definitions("file:///a.fake", text, 3, 5, Encoding::Utf16);
        let lines: Vec<_> = found
            .as_array()
            .into_iter()
            .flatten()
            .map(|l| l["range"]["start"]["line"].clone())
            .collect();
        assert_eq!(lines, vec![json!(0), json!(2)]);
        assert_eq!(
            definitions("file:///a.fake", text, 3, 2, Encoding::Utf16),
            json!([])
        );
    }

    #[test]
    fn name_columns_count_in_the_encoding() {
        let symbols = document_symbols("  😀 x\nfunction f\n", Encoding::Utf16);
        assert_eq!(symbols[0]["selectionRange"]["start"]["character"], 9);
        let wide = document_symbols("class 😀x\n", Encoding::Utf16);
        assert_eq!(wide[0]["selectionRange"]["end"]["character"], 9);
        let text = "variable 😀\n";
        let utf8 = document_symbols(text, Encoding::Utf8);
        assert_eq!(utf8[0]["selectionRange"]["end"]["character"], 13);
    }
}
