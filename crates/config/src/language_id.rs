//! The languageId squiggle sends in `didOpen`: the well-known one of a file's extension (VS Code's
//! names), or a custom server's own.

/// The well-known LSP languageId of each file extension (VS Code's names).
pub(crate) const LANGUAGE_IDS: &[(&str, &str)] = &[
    ("ts", "typescript"),
    ("mts", "typescript"),
    ("cts", "typescript"),
    ("tsx", "typescriptreact"),
    ("js", "javascript"),
    ("mjs", "javascript"),
    ("cjs", "javascript"),
    ("jsx", "javascriptreact"),
    ("json", "json"),
    ("jsonc", "jsonc"),
    ("css", "css"),
    ("scss", "scss"),
    ("less", "less"),
    ("html", "html"),
    ("htm", "html"),
    ("vue", "vue"),
    ("svelte", "svelte"),
    ("c", "c"),
    ("h", "c"),
    ("cc", "cpp"),
    ("cpp", "cpp"),
    ("cxx", "cpp"),
    ("c++", "cpp"),
    ("hpp", "cpp"),
    ("hh", "cpp"),
    ("hxx", "cpp"),
    ("m", "objective-c"),
    ("mm", "objective-cpp"),
    ("py", "python"),
    ("pyi", "python"),
    ("java", "java"),
    ("sh", "shellscript"),
    ("bash", "shellscript"),
    ("yaml", "yaml"),
    ("yml", "yaml"),
    ("toml", "toml"),
    ("md", "markdown"),
    ("markdown", "markdown"),
    ("dockerfile", "dockerfile"),
    ("php", "php"),
    ("phtml", "php"),
    ("go", "go"),
    ("rs", "rust"),
    ("lua", "lua"),
    ("luau", "luau"),
    ("zig", "zig"),
    ("zon", "zig"),
    ("rb", "ruby"),
    ("rake", "ruby"),
    ("gemspec", "ruby"),
];

/// The languageId for a file with `extension` sent to a server whose configured languageId is
/// `configured`: when `configured` is a well-known id (as every built-in's is), the well-known
/// id of the extension (clangd gets `c` for `.c` and `cpp` for `.cpp`, biome `json` for
/// `.json`); a server configured with an id of its own (`mylang`) always gets that one.
pub fn language_id_for_extension(configured: &str, extension: &str) -> String {
    let known = |id: &str| LANGUAGE_IDS.iter().any(|(_, known)| *known == id);
    if !known(configured) {
        return configured.to_string();
    }
    let extension = extension.trim_start_matches('.').to_ascii_lowercase();
    LANGUAGE_IDS
        .iter()
        .find(|(ext, _)| *ext == extension)
        .map_or(configured, |(_, id)| id)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_ids_follow_the_extension() {
        assert_eq!(language_id_for_extension("cpp", "c"), "c");
        assert_eq!(language_id_for_extension("cpp", "CPP"), "cpp");
        assert_eq!(language_id_for_extension("cpp", "mm"), "objective-cpp");
        assert_eq!(language_id_for_extension("css", "scss"), "scss");
        assert_eq!(language_id_for_extension("css", ".less"), "less");
        assert_eq!(language_id_for_extension("javascript", "json"), "json");
        assert_eq!(language_id_for_extension("json", "jsonc"), "jsonc");
        assert_eq!(language_id_for_extension("dockerfile", ""), "dockerfile");
        assert_eq!(language_id_for_extension("mylang", "ts"), "mylang");
    }
}
