//! Lets this crate's tests find libdeepgemm at run time without LD_LIBRARY_PATH,
//! when deepgemm-sys was told where it is (DEEPGEMM_LIB_DIR or pkg-config).
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_DEEPGEMM_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_DEEPGEMM_LIB_DIR") {
        println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{dir}");
    }
}
