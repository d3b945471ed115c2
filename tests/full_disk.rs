//! A real full disk (docs/RELIABILITY.md, campaign 4): a crawl on a small tmpfs of its own, in a
//! private mount namespace (`unshare -rm`), nearly filled beforehand, runs until the file system
//! says ENOSPC. The run fails with "No space left on device" naming the file, nothing committed
//! is damaged (`dragnet check crawl`), and once space is freed the next run ends the crawl with
//! the same decisions as a crawl that never filled the disk.

use crate::common;

use std::path::Path;
use std::process::Command;

const M: u32 = 2;

/// Whether this machine lets the test mount a tmpfs in a mount namespace of its own.
fn can_mount() -> bool {
    Command::new("unshare")
        .args(["-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The script run inside the namespace: mount, copy the crawl in, leave `free` bytes, crawl
/// until the disk is full, check, free the space, crawl again, copy the crawl out.
const SCRIPT: &str = r#"
set -u
mount -t tmpfs -o size="$SIZE" tmpfs "$MNT" || exit 90
cp -a "$TEMPLATE" "$MNT/crawl" || exit 91
avail=$(df --output=avail -B1 "$MNT" | tail -1)
blocks=$(( (avail - FREE) / 4096 ))
[ "$blocks" -gt 0 ] && dd if=/dev/zero of="$MNT/filler" bs=4096 count="$blocks" 2>/dev/null
"$BIN" cycle --until-empty --progress log "$MNT/crawl" > "$OUT/full.out" 2> "$OUT/full.err"
echo $? > "$OUT/full.rc"
df --output=avail -B1 "$MNT" | tail -1 > "$OUT/full.avail"
"$BIN" check crawl "$MNT/crawl" > "$OUT/check.out" 2>&1
echo $? > "$OUT/check.rc"
rm -f "$MNT/filler"
"$BIN" cycle --until-empty --progress log "$MNT/crawl" > "$OUT/again.out" 2> "$OUT/again.err"
echo $? > "$OUT/again.rc"
cp -a "$MNT/crawl" "$OUT/crawl"
"#;

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_default()
}

#[test]
#[ignore = "needs to mount a tmpfs in a mount namespace (unshare -rm: root or user namespaces); .ci/run runs it"]
fn a_crawl_that_fills_the_disk_stops_cleanly_and_finishes_once_space_is_freed() {
    common::require(
        "a private tmpfs mount",
        can_mount(),
        "`unshare -rm` must be able to mount a tmpfs (run as root, or enable unprivileged user \
         namespaces: sysctl kernel.unprivileged_userns_clone=1)",
    );
    let (web, server) = common::small_web(71, 6, 20);
    let cfg = {
        let mut cfg = common::websim_config(M, 2);
        cfg.prioritize.block = 16;
        cfg
    };
    let template = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let root = template.dir.root();
    // The reference: the same crawl on a disk with room.
    let scratch = tempfile::tempdir().unwrap();
    let reference = scratch.path().join("reference");
    common::copy_dir(root, &reference);
    let out = common::dragnet_on(
        &["cycle", "--until-empty", "--progress", "quiet"],
        &reference,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = common::outcome(&dragnet::crawl::CrawlDir::new(&reference), M);

    let out_dir = scratch.path().join("out");
    let mnt = scratch.path().join("mnt");
    std::fs::create_dir_all(&out_dir).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    // 256 KiB free: the crawl's first WARC files and runs fit, its whole crawl does not.
    let run = Command::new("unshare")
        .args(["-rm", "sh", "-c", SCRIPT])
        .env("SIZE", "16m")
        .env("FREE", (256 << 10).to_string())
        .env("MNT", &mnt)
        .env("TEMPLATE", root)
        .env("OUT", &out_dir)
        .env("BIN", env!("CARGO_BIN_EXE_dragnet"))
        .output()
        .unwrap();
    server.stop();
    assert!(
        run.status.success(),
        "the namespace script failed: {:?} {}",
        run.status.code(),
        String::from_utf8_lossy(&run.stderr)
    );
    let full_rc = read(&out_dir, "full.rc");
    let full_err = read(&out_dir, "full.err");
    assert!(
        matches!(full_rc.trim(), "3" | "4"),
        "the run on a full disk: exit {full_rc}\n{full_err}"
    );
    assert!(
        full_err.contains("No space left on device"),
        "no ENOSPC in the error: {full_err}"
    );
    assert!(
        full_err.contains(&format!("{}/crawl/", mnt.display())),
        "the error names no file of the crawl: {full_err}"
    );
    assert_eq!(
        read(&out_dir, "check.rc").trim(),
        "0",
        "a full disk damaged committed files: {}",
        read(&out_dir, "check.out")
    );
    assert_eq!(
        read(&out_dir, "again.rc").trim(),
        "0",
        "after space was freed: {}",
        read(&out_dir, "again.err")
    );
    let got = common::outcome(&dragnet::crawl::CrawlDir::new(out_dir.join("crawl")), M);
    assert!(
        got == want,
        "the crawl ended differently after the full disk"
    );
    eprintln!(
        "full disk: the first run stopped with exit {} ({} bytes left), the second finished the \
         crawl: {} URLs fetched",
        full_rc.trim(),
        read(&out_dir, "full.avail").trim(),
        got.fetched.len()
    );
}
