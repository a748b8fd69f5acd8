//! The `squiggle` binary: the command line is the library's (see `lib.rs`).

fn main() -> std::process::ExitCode {
    squiggle::main()
}
