//! Without lavapipe the oracle fails with an error that says what to
//! install. The test re-runs itself in a child process whose Vulkan loader
//! sees no driver at all (`VK_ICD_FILENAMES` names a missing file), so the
//! environment of other tests is untouched.

use lathe_oracle::{INSTALL_HINT, Oracle, OracleError};

const CHILD: &str = "LATHE_ORACLE_NO_DRIVER_CHILD";

#[test]
fn missing_lavapipe_names_the_packages() {
    if std::env::var_os(CHILD).is_some() {
        let err = Oracle::new().err().expect("no Vulkan driver is visible");
        assert!(matches!(err, OracleError::NoLavapipe { .. }), "{err}");
        assert!(err.to_string().ends_with(INSTALL_HINT), "{err}");
        assert!(INSTALL_HINT.contains("apt-get install -y mesa-vulkan-drivers libvulkan1"));
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let status = std::process::Command::new(exe)
        .args([
            "--exact",
            "missing_lavapipe_names_the_packages",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .env("VK_ICD_FILENAMES", "/nonexistent/lathe-no-driver.json")
        .env("VK_DRIVER_FILES", "/nonexistent/lathe-no-driver.json")
        .status()
        .unwrap();
    assert!(status.success(), "the child run failed: {status}");
}
