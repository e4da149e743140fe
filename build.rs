//! Rebuilds the binary when the demo data it embeds (`beyondswe demo`) changes.

fn main() {
    for path in [
        "fixtures/dataset",
        "fixtures/predictions",
        "fixtures/test_suites",
        "fixtures/submissions",
        "fixtures/images",
        "scripts/build-fixture-images.sh",
        "scripts/build-base-image.sh",
        "scripts/debian-mirror.sh",
    ] {
        println!("cargo::rerun-if-changed={path}");
    }
}
