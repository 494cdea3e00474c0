fn main() -> std::process::ExitCode {
    retrylab::cli::main()
}
