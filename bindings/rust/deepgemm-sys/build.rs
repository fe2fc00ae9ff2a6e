//! Tells rustc where libdeepgemm is. The declarations are committed (src/bindings.rs, checked
//! against deepgemm.h in CI), so nothing is generated here and no header is needed.
//!
//! Where the library is found, first hit wins:
//!   $DEEPGEMM_LIB_DIR;
//!   `pkg-config --libs-only-L deepgemm` (after `cmake --install`; PKG_CONFIG_PATH for other prefixes);
//!   the linker's default path (a system install).
//! The `pkg-config` program is run directly: that is all the pkg-config crate would do here, and
//! it keeps the crate free of build dependencies.
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn pkg_config_lib_dirs() -> Vec<PathBuf> {
    let program = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into());
    let out = match Command::new(program).args(["--libs-only-L", "deepgemm"]).output() {
        Ok(out) if out.status.success() => out,
        _ => return Vec::new(),
    };
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|flag| flag.strip_prefix("-L"))
        .map(PathBuf::from)
        .collect()
}

fn main() {
    for var in ["DEEPGEMM_LIB_DIR", "PKG_CONFIG", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let dirs: Vec<PathBuf> = match env::var_os("DEEPGEMM_LIB_DIR") {
        Some(dir) => vec![PathBuf::from(dir)],
        None => pkg_config_lib_dirs(),
    };
    for dir in &dirs {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
    if let Some(dir) = dirs.first() {
        // Dependents read this as DEP_DEEPGEMM_LIB_DIR (the safe crate puts it in the RPATH of its
        // tests and examples), and this crate's own tests run without LD_LIBRARY_PATH.
        println!("cargo:lib_dir={}", dir.display());
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=deepgemm");
}
