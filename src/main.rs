fn main() -> std::process::ExitCode {
    gtb::cli::main()
}
