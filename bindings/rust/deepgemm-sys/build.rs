//! Generates the declarations of deepgemm.h with the `bindgen` command-line tool (Debian's
//! `bindgen` package; the bindgen crate would have to come from the network) and tells rustc
//! where libdeepgemm is.
//!
//! Where things are found, first hit wins:
//!   header:   $DEEPGEMM_INCLUDE_DIR, `pkg-config --variable=includedir deepgemm`, this repository's include/
//!   library:  $DEEPGEMM_LIB_DIR, `pkg-config --variable=libdir deepgemm`, the linker's default path
//!   bindgen:  $BINDGEN, else `bindgen` on PATH
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn pkg_config_variable(name: &str) -> Option<PathBuf> {
    let out = Command::new(env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into()))
        .args(["--variable", name, "deepgemm"])
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| PathBuf::from(text))
}

fn main() {
    for var in ["DEEPGEMM_INCLUDE_DIR", "DEEPGEMM_LIB_DIR", "BINDGEN", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let include_dir = env::var_os("DEEPGEMM_INCLUDE_DIR")
        .map(PathBuf::from)
        .or_else(|| pkg_config_variable("includedir"))
        .filter(|d| d.join("deepgemm/deepgemm.h").exists())
        .unwrap_or_else(|| manifest.join("../../../include"));
    let header = include_dir.join("deepgemm/deepgemm.h");
    assert!(header.exists(), "deepgemm.h not found at {} (set DEEPGEMM_INCLUDE_DIR)", header.display());
    println!("cargo:rerun-if-changed={}", header.display());
    println!("cargo:include={}", include_dir.display());

    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("deepgemm_bindings.rs");
    let bindgen = env::var("BINDGEN").unwrap_or_else(|_| "bindgen".into());
    let status = Command::new(&bindgen)
        .arg(&header)
        .args(["--allowlist-function", "dgemm_.*"])
        .args(["--allowlist-type", "dgemm_.*"])
        .args(["--allowlist-var", "DGEMM_.*"])
        .args(["--constified-enum-module", "dgemm_.*_t"])
        .arg("--size_t-is-usize")
        .arg("--no-doc-comments")
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(format!("-I{}", include_dir.display()))
        .status()
        .unwrap_or_else(|e| panic!("cannot run `{bindgen}` (install Debian's bindgen, or set BINDGEN): {e}"));
    assert!(status.success(), "bindgen failed on {}", header.display());

    let lib_dir = env::var_os("DEEPGEMM_LIB_DIR").map(PathBuf::from).or_else(|| pkg_config_variable("libdir"));
    if let Some(dir) = lib_dir.as_deref() {
        println!("cargo:rustc-link-search=native={}", dir.display());
        // Dependents (the safe crate's tests and examples) read this as DEP_DEEPGEMM_LIB_DIR.
        println!("cargo:lib_dir={}", dir.display());
        link_rpath(dir);
    }
    println!("cargo:rustc-link-lib=dylib=deepgemm");
}

fn link_rpath(dir: &Path) {
    // This crate's own tests (the generated layout tests) run without LD_LIBRARY_PATH.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
}
