# Sanitizer run-time options for scripts/test.sh --sanitize (sourced; needs the suppression files next to it).
# Stop at the first error with a stack trace; suppressions name third-party libraries only (lsan.supp, ubsan.supp).
sanitizers_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:print_stacktrace=1:strict_string_checks=1:detect_stack_use_after_return=0:check_initialization_order=1"
export LSAN_OPTIONS="suppressions=${sanitizers_dir}/lsan.supp:print_suppressions=0:print_stacktrace=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=${sanitizers_dir}/ubsan.supp"
unset sanitizers_dir
