//! The `websim` command: a thin wrapper over the library's CLI ([`websim::cli::run`]).
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(websim::cli::run(std::env::args_os()))
}
