//! Puts the library directory deepgemm-sys found (DEEPGEMM_LIB_DIR or pkg-config) into the RPATH of
//! this crate's tests and examples, so that they run without LD_LIBRARY_PATH from any prefix.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_DEEPGEMM_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_DEEPGEMM_LIB_DIR") {
        println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{dir}");
        println!("cargo:rustc-link-arg-examples=-Wl,-rpath,{dir}");
    }
}
