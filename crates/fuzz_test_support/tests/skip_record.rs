//! A skipped test leaves a line `package binary::test<tab>why` in the file named by
//! FUZZ_SKIPPED_TESTS_FILE (scripts/test prints them at the end), and nothing when it is unset.
//! One test in this binary: it sets the variable for its own process.

use fuzz_test_support::system::{skip, SKIPPED_TESTS_FILE};
use fuzz_test_support::ScratchDirectory;

#[test]
fn a_skip_is_recorded_with_the_test_and_the_reason() {
    let dir = ScratchDirectory::create("skip-record-test", "record");
    let file = dir.join("skipped.txt");
    std::env::remove_var(SKIPPED_TESTS_FILE);
    skip("not recorded: the variable is unset");
    assert!(!file.exists());
    std::env::set_var(SKIPPED_TESTS_FILE, &file);
    skip("`sshd` is not installed; see scripts/ci-packages.txt");
    skip("a reason\non two lines");
    let text = std::fs::read_to_string(&file).expect("the record");
    assert_eq!(
        text,
        "fuzz_test_support skip_record::a_skip_is_recorded_with_the_test_and_the_reason\t`sshd` is not installed; see scripts/ci-packages.txt\n\
         fuzz_test_support skip_record::a_skip_is_recorded_with_the_test_and_the_reason\ta reason on two lines\n"
    );
}
