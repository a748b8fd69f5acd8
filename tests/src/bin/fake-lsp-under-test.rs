//! The fake language server, built as a binary of the tests' own package so that Cargo builds
//! it fresh before the integration tests run, and tells them where (`CARGO_BIN_EXE_*`).

fn main() -> anyhow::Result<()> {
    squiggle_fake_lsp::main()
}
