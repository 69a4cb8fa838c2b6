// Records the compiler and the resolved peer versions for the JSON context.
use std::env;
use std::fs;
use std::path::Path;
use std::process::Command;

fn main() {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=PARK_PEERS_RUSTC={}", version);

    let dir = env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_string());
    let lock = Path::new(&dir).join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    println!("cargo:rerun-if-changed=build.rs");
    let wanted = ["parking_lot", "tokio", "rayon", "crossbeam-channel", "libc"];
    let mut found: Vec<String> = Vec::new();
    if let Ok(text) = fs::read_to_string(&lock) {
        let mut name: Option<String> = None;
        for line in text.lines() {
            let line = line.trim();
            if line == "[[package]]" {
                name = None;
            } else if let Some(v) = line.strip_prefix("name = ") {
                name = Some(v.trim_matches('"').to_string());
            } else if let Some(v) = line.strip_prefix("version = ") {
                if let Some(n) = &name {
                    if wanted.contains(&n.as_str()) {
                        found.push(format!("{} {}", n, v.trim_matches('"')));
                    }
                }
            }
        }
    }
    found.sort();
    println!("cargo:rustc-env=PARK_PEERS_VERSIONS={}", found.join(", "));
}
