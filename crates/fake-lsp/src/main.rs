//! `fake-lsp [--scenario NAME | --script FILE]`: the fake LSP server on stdio (see the library).

fn main() -> anyhow::Result<()> {
    squiggle_fake_lsp::main()
}
