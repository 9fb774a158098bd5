# SPDX-License-Identifier: BSD-3-Clause
# Sanitizer run-time options for scripts/test.sh --sanitize (sourced; needs the suppression files next to it).
# Stop at the first error with a stack trace; suppressions name third-party libraries only (lsan.supp, ubsan.supp).
# Leak stacks are unwound with DWARF (fast_unwind_on_malloc=0): Open MPI, PMIx and libevent are built without
# frame pointers, so the fast unwinder stops after one frame, at an address no suppression can name; the full
# stack reaches MPI_Init in libmpi. Open MPI keeps its plugins loaded (disable_dlclose) so that their frames
# keep a module name at exit, when the leak check runs.
sanitizers_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:print_stacktrace=1:strict_string_checks=1:check_initialization_order=1:fast_unwind_on_malloc=0"
export LSAN_OPTIONS="suppressions=${sanitizers_dir}/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=${sanitizers_dir}/ubsan.supp"
export OMPI_MCA_mca_base_component_disable_dlclose=1
unset sanitizers_dir
