//! A record's bytes into its file, in the file's compression: as they are, one gzip member
//! ([`GzipMembers`]; a body that comes with room in front of it, [`super::Room`], compressed
//! where it lies), or one zstd frame.

use super::{Compression, GzipMembers, Rec, KEEP_BUFFER, TAIL};
use crate::error::{IoContext, Result};
use crate::storage::AtomicFile;

/// The gzip members and zstd context of a writer (the one its files' compression uses), and
/// the buffer of a record's zstd frame.
pub(super) type Packers<'a> = (
    Option<&'a mut GzipMembers>,
    Option<&'a mut zstd::bulk::Compressor<'static>>,
    &'a mut Vec<u8>,
);

/// Writes the record `rec` with its header `head` (and its block, and its end) to `file`.
pub(super) fn put(
    file: &mut AtomicFile,
    compression: Compression,
    (gzip, zstd, packed): Packers<'_>,
    head: &[u8],
    rec: &mut Rec<'_>,
) -> Result<()> {
    match compression {
        Compression::None => {
            let [a, b, c] = rec.pieces();
            for piece in [head, a, b, c, TAIL] {
                file.write_all_bytes(piece)?;
            }
        }
        Compression::Gzip => {
            let gz = gzip.expect("gzip compressor exists for gzip files");
            // The body where it lies, the header and HTTP head written in front of it; or
            // the pieces copied into one buffer.
            let in_place = match (&mut rec.room, rec.block[1].is_empty()) {
                (Some(room), true) => gz.member_in_place([head, rec.block[0]], room, TAIL),
                _ => None,
            };
            let member = match in_place {
                Some(member) => member,
                None => {
                    let [a, b, c] = rec.pieces();
                    gz.member(&[head, a, b, c, TAIL])
                }
            };
            file.write_all_bytes(member.ctx("gzip a record for", file.path())?)?;
        }
        Compression::Zstd => {
            let z = zstd.expect("zstd compressor exists for zstd files");
            let [a, b, c] = rec.pieces();
            zstd_frame(z, &[head, a, b, c, TAIL], packed)
                .ctx("zstd-compress a record for", file.path())?;
            file.write_all_bytes(packed)?;
        }
    }
    if packed.capacity() > KEEP_BUFFER {
        packed.clear();
        packed.shrink_to(KEEP_BUFFER);
    }
    Ok(())
}

/// Compresses `pieces`, one after the other, into one zstd frame in `out` (replacing what it
/// held), with the content size in the frame header and a checksum, as `zstd` writes them: the
/// pieces are streamed through the context, never copied into one buffer.
fn zstd_frame(
    z: &mut zstd::bulk::Compressor<'static>,
    pieces: &[&[u8]],
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    use zstd::zstd_safe::{InBuffer, OutBuffer, ResetDirective};
    let total: usize = pieces.iter().map(|p| p.len()).sum();
    let err = |code: usize| std::io::Error::other(zstd::zstd_safe::get_error_name(code).to_owned());
    out.clear();
    out.reserve(zstd::zstd_safe::compress_bound(total));
    let cctx = z.context_mut();
    cctx.reset(ResetDirective::SessionOnly).map_err(err)?;
    cctx.set_pledged_src_size(Some(total as u64)).map_err(err)?;
    let mut o = OutBuffer::around(out);
    for piece in pieces {
        let mut i = InBuffer::around(piece);
        while i.pos() < piece.len() {
            cctx.compress_stream(&mut o, &mut i).map_err(err)?;
        }
    }
    // The bound above leaves room for the whole frame, so one call ends it.
    let left = cctx.end_stream(&mut o).map_err(err)?;
    if left != 0 {
        return Err(std::io::Error::other("zstd frame did not fit its bound"));
    }
    Ok(())
}
