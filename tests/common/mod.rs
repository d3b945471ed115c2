//! Helpers shared by the integration tests (each test file that needs one says `mod common;`).

use std::path::PathBuf;

/// The third-party conformance data: `../shared/testdata` beside the repo, or the directory
/// named by `DRAGNET_TESTDATA`. Panics with how to fix it when `sub` (e.g. `"robots"`) is
/// missing there; `holds` says what that folder should contain.
pub fn testdata_dir(sub: &str, holds: &str) -> PathBuf {
    let dir = match std::env::var_os("DRAGNET_TESTDATA") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/testdata"),
    };
    assert!(
        dir.join(sub).is_dir(),
        "test data not found: {} has no {sub}/ directory. Set DRAGNET_TESTDATA to the testdata \
         directory (the one containing {holds}).",
        dir.display()
    );
    dir
}
