//! What a Parquet file declares about itself, checked against the file before the `parquet`
//! crate reads it: the footer's length, the schema's nesting (the crate builds the schema
//! recursively, so a few thousand nested groups would overflow the stack), every column chunk's
//! place in the file, every page's sizes (the crate allocates what a page header declares
//! before it decompresses), and the values the pages hold against the values and rows the
//! footer counts (a column claiming 2³¹ values over one stored makes the crate's decoders
//! panic). The footer's schema and every page header are read here with a small reader of
//! Thrift's compact encoding that never recurses past a fixed depth.

use parquet::file::metadata::ParquetMetaData;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// The deepest a schema may nest groups (a record's fields are JSON; a dataset's go 2 or 3
/// levels deep).
pub(super) const MAX_DEPTH: usize = 64;
/// The largest footer read.
const MAX_FOOTER: u64 = 64 << 20;
/// The most a column chunk may declare once decompressed: twice a JSONL line's cap (a row
/// group is read one page per column at a time; each page is capped at a line's cap).
fn max_chunk() -> u64 {
    2 * crate::record::max_line_bytes() as u64
}
/// How deep the Thrift reader follows nested structs when it skips a field.
const MAX_THRIFT_DEPTH: u32 = 32;
/// The most bytes a page header may take (its statistics hold at most two values).
const MAX_PAGE_HEADER: u64 = 64 << 20;

/// Reads the footer's schema and refuses a schema nested deeper than [`MAX_DEPTH`], a footer
/// longer than the file, or one that cannot be read. `len` is the file's length. Returns where
/// the file's data ends (the footer's start), for [`check_pages`].
pub(super) fn check_footer(file: &File, len: u64) -> Result<u64, String> {
    if len < 12 {
        return Err(format!("{len} bytes, fewer than a Parquet file's frame"));
    }
    let mut tail = [0u8; 8];
    file.read_exact_at(&mut tail, len - 8)
        .map_err(|e| e.to_string())?;
    if &tail[4..] != b"PAR1" {
        return Err("it does not end with `PAR1`".into());
    }
    let footer_len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if footer_len + 12 > len {
        return Err(format!(
            "its footer declares {footer_len} bytes, more than the file holds"
        ));
    }
    if footer_len > MAX_FOOTER {
        return Err(format!(
            "its footer declares {} MiB, more than {} MiB",
            footer_len >> 20,
            MAX_FOOTER >> 20
        ));
    }
    let mut footer = vec![0u8; footer_len as usize];
    file.read_exact_at(&mut footer, len - 8 - footer_len)
        .map_err(|e| e.to_string())?;
    schema_depth(&footer).and_then(|depth| {
        if depth > MAX_DEPTH {
            Err(format!(
                "its schema nests groups more than {MAX_DEPTH} deep, deeper than any record's \
                 fields go"
            ))
        } else {
            Ok(len - 8 - footer_len)
        }
    })
}

/// Checks every column chunk and page against the file's data (which ends at `data_end`, from
/// [`check_footer`]) and the footer's counts.
pub(super) fn check_pages(
    file: &File,
    data_end: u64,
    meta: &ParquetMetaData,
    page_max: u64,
) -> Result<(), String> {
    for (g, group) in meta.row_groups().iter().enumerate() {
        let rows = group.num_rows();
        if rows < 0 {
            return Err(format!("row group {g} declares {rows} rows"));
        }
        let mut group_bytes = 0u64;
        for column in group.columns() {
            let name = column.column_path().string();
            let at = |what: String| format!("row group {g}, column `{name}`: {what}");
            // `byte_range()` panics on a negative offset or size: they are read and checked here.
            let offset = column
                .dictionary_page_offset()
                .unwrap_or(column.data_page_offset());
            let (Ok(start), Ok(size)) = (
                u64::try_from(offset),
                u64::try_from(column.compressed_size()),
            ) else {
                return Err(at(format!(
                    "its data is declared at byte {offset} with {} bytes; neither may be negative",
                    column.compressed_size()
                )));
            };
            if start < 4 || start.checked_add(size).is_none_or(|end| end > data_end) {
                return Err(at(format!(
                    "its data is declared at bytes {start}..{}, outside the file's data (4..{data_end})",
                    start.saturating_add(size)
                )));
            }
            let unpacked = u64::try_from(column.uncompressed_size())
                .map_err(|_| at("a negative size".into()))?;
            group_bytes = group_bytes.saturating_add(unpacked);
            if group_bytes > max_chunk() {
                return Err(at(format!(
                    "its row group declares more than {} MiB of data once decompressed",
                    max_chunk() >> 20
                )));
            }
            let values = pages(file, start, start + size, unpacked.min(page_max)).map_err(at)?;
            let declared = column.num_values();
            if values.values != declared {
                return Err(at(format!(
                    "it declares {declared} values, and its pages hold {}",
                    values.values
                )));
            }
            if declared < rows || values.rows.is_some_and(|r| r != rows) {
                return Err(at(format!(
                    "its row group declares {rows} rows, and the column holds {}",
                    values.rows.unwrap_or(declared)
                )));
            }
        }
    }
    Ok(())
}

/// What a column chunk's data pages hold: values, and rows where every page says (v2 pages).
struct Held {
    values: i64,
    rows: Option<i64>,
}

/// Walks the page headers of a column chunk (`start..end` of the file): each page's sizes must
/// fit the chunk and `page_max`.
fn pages(file: &File, start: u64, end: u64, page_max: u64) -> Result<Held, String> {
    let mut held = Held {
        values: 0,
        rows: Some(0),
    };
    let mut pos = start;
    let mut window = 4096u64;
    while pos < end {
        let take = window.min(end - pos);
        let mut buf = vec![0u8; take as usize];
        file.read_exact_at(&mut buf, pos)
            .map_err(|e| e.to_string())?;
        let header = match page_header(&buf) {
            Ok(h) => h,
            Err(Short) if take < end - pos && window < MAX_PAGE_HEADER => {
                window *= 4;
                continue;
            }
            Err(Short) => {
                return Err(format!(
                    "the page header at byte {pos} runs past its column chunk"
                ));
            }
        };
        let header = header.map_err(|e| format!("the page header at byte {pos}: {e}"))?;
        let (Ok(packed), Ok(unpacked)) = (
            u64::try_from(header.compressed),
            u64::try_from(header.uncompressed),
        ) else {
            return Err(format!("the page at byte {pos} declares a negative size"));
        };
        if unpacked > page_max {
            return Err(format!(
                "the page at byte {pos} declares {unpacked} bytes once decompressed, more than \
                 its column chunk, or a record, may hold ({page_max} bytes)"
            ));
        }
        let next = pos + header.len as u64 + packed;
        if next > end {
            return Err(format!(
                "the page at byte {pos} declares {packed} bytes, more than its column chunk holds"
            ));
        }
        if let Some(values) = header.values {
            held.values = held.values.saturating_add(i64::from(values));
            held.rows = match (held.rows, header.rows) {
                (Some(total), Some(rows)) => Some(total.saturating_add(i64::from(rows))),
                _ => None,
            };
        }
        pos = next;
        window = 4096;
    }
    Ok(held)
}

/// A page header's sizes and, for a data page, its values (and rows, for a v2 page).
struct PageHeader {
    len: usize,
    uncompressed: i32,
    compressed: i32,
    values: Option<i32>,
    rows: Option<i32>,
}

/// The bytes ran out before the header did.
struct Short;

/// Reads one page header from the start of `buf`: `Err(Short)` when `buf` ends inside it.
fn page_header(buf: &[u8]) -> Result<Result<PageHeader, String>, Short> {
    let mut r = Compact { buf, pos: 0 };
    let read = (|| {
        let (mut uncompressed, mut compressed, mut values, mut rows) = (None, None, None, None);
        let mut last = 0i16;
        while let Some((id, ty)) = r.field(&mut last)? {
            match (id, ty) {
                (2, I32) => uncompressed = Some(r.i32()?),
                (3, I32) => compressed = Some(r.i32()?),
                // data_page_header: num_values; data_page_header_v2: num_values, num_rows.
                (5 | 8, STRUCT) => {
                    let mut inner = 0i16;
                    while let Some((f, t)) = r.field(&mut inner)? {
                        match (f, t) {
                            (1, I32) => values = Some(r.i32()?),
                            (3, I32) if id == 8 => rows = Some(r.i32()?),
                            _ => r.skip(t, 1)?,
                        }
                    }
                    if id == 5 {
                        rows = None;
                    }
                }
                _ => r.skip(ty, 0)?,
            }
        }
        match (uncompressed, compressed) {
            (Some(uncompressed), Some(compressed)) => Ok(PageHeader {
                len: r.pos,
                uncompressed,
                compressed,
                values,
                rows,
            }),
            _ => Err(Bad("no page sizes".into())),
        }
    })();
    match read {
        Ok(h) => Ok(Ok(h)),
        Err(Bad(e)) if e == SHORT => Err(Short),
        Err(Bad(e)) => Ok(Err(e)),
    }
}

/// How deep the schema in a footer (Thrift `FileMetaData`) nests: 0 for a root with leaves
/// only. Read element by element, with a stack of the children each open group still has.
fn schema_depth(footer: &[u8]) -> Result<usize, String> {
    let mut r = Compact {
        buf: footer,
        pos: 0,
    };
    let read = (|| {
        let mut last = 0i16;
        while let Some((id, ty)) = r.field(&mut last)? {
            if id != 2 || ty != LIST {
                r.skip(ty, 0)?;
                continue;
            }
            let (elem, count) = r.list_header()?;
            if elem != STRUCT {
                return Err(Bad("the schema is not a list of elements".into()));
            }
            let mut open: Vec<i64> = Vec::new();
            let mut deepest = 0usize;
            for i in 0..count {
                let mut children = 0i64;
                let mut inner = 0i16;
                while let Some((f, t)) = r.field(&mut inner)? {
                    if (f, t) == (5, I32) {
                        children = i64::from(r.i32()?);
                    } else {
                        r.skip(t, 1)?;
                    }
                }
                if children < 0 {
                    return Err(Bad(format!("schema element {i} has {children} children")));
                }
                if i > 0 {
                    while open.last() == Some(&0) {
                        open.pop();
                    }
                    match open.last_mut() {
                        Some(left) => *left -= 1,
                        None => {
                            return Err(Bad(format!("schema element {i} belongs to no group")));
                        }
                    }
                }
                if children > 0 || i == 0 {
                    open.push(children);
                    deepest = deepest.max(open.len() - 1);
                    if deepest > MAX_DEPTH {
                        return Ok(deepest);
                    }
                }
            }
            return Ok(deepest);
        }
        Err(Bad("the footer has no schema".into()))
    })();
    read.map_err(|Bad(e)| {
        if e == SHORT {
            "the footer ends inside its schema".to_owned()
        } else {
            format!("its footer cannot be read: {e}")
        }
    })
}

const I32: u8 = 5;
const LIST: u8 = 9;
const STRUCT: u8 = 12;
const SHORT: &str = "the bytes end inside a value";

/// A reading error of the compact encoding.
struct Bad(String);

/// A reader of Thrift's compact encoding over a byte slice.
struct Compact<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Compact<'_> {
    fn byte(&mut self) -> Result<u8, Bad> {
        let b = *self.buf.get(self.pos).ok_or_else(|| Bad(SHORT.into()))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, Bad> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Bad("a number longer than ten bytes".into()))
    }

    fn zigzag(&mut self) -> Result<i64, Bad> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn i32(&mut self) -> Result<i32, Bad> {
        i32::try_from(self.zigzag()?).map_err(|_| Bad("a 32-bit number out of range".into()))
    }

    /// The next field's id and type, or `None` at the struct's end.
    fn field(&mut self, last: &mut i16) -> Result<Option<(i16, u8)>, Bad> {
        let b = self.byte()?;
        if b == 0 {
            return Ok(None);
        }
        let (delta, ty) = (b >> 4, b & 0x0f);
        let id = if delta == 0 {
            i16::try_from(self.zigzag()?).map_err(|_| Bad("a field id out of range".into()))?
        } else {
            last.checked_add(i16::from(delta))
                .ok_or_else(|| Bad("a field id out of range".into()))?
        };
        *last = id;
        Ok(Some((id, ty)))
    }

    fn list_header(&mut self) -> Result<(u8, u64), Bad> {
        let b = self.byte()?;
        let count = if b >> 4 == 15 {
            self.varint()?
        } else {
            u64::from(b >> 4)
        };
        // Every element takes a byte at least: a count beyond the bytes left is a lie.
        if count > (self.buf.len() - self.pos) as u64 {
            return Err(Bad(SHORT.into()));
        }
        Ok((b & 0x0f, count))
    }

    fn skip_bytes(&mut self, n: u64) -> Result<(), Bad> {
        let n = usize::try_from(n).map_err(|_| Bad(SHORT.into()))?;
        if n > self.buf.len() - self.pos {
            return Err(Bad(SHORT.into()));
        }
        self.pos += n;
        Ok(())
    }

    /// Skips a value of type `ty` (a field's type, in which booleans carry their value).
    fn skip(&mut self, ty: u8, depth: u32) -> Result<(), Bad> {
        if depth > MAX_THRIFT_DEPTH {
            return Err(Bad(format!(
                "values nested more than {MAX_THRIFT_DEPTH} deep"
            )));
        }
        match ty {
            1 | 2 => Ok(()),
            3 => self.byte().map(drop),
            4..=6 => self.varint().map(drop),
            7 => self.skip_bytes(8),
            8 => {
                let n = self.varint()?;
                self.skip_bytes(n)
            }
            9 | 10 => {
                let (elem, count) = self.list_header()?;
                for _ in 0..count {
                    self.skip_element(elem, depth + 1)?;
                }
                Ok(())
            }
            11 => {
                let count = self.varint()?;
                if count == 0 {
                    return Ok(());
                }
                if count > (self.buf.len() - self.pos) as u64 {
                    return Err(Bad(SHORT.into()));
                }
                let kinds = self.byte()?;
                for _ in 0..count {
                    self.skip_element(kinds >> 4, depth + 1)?;
                    self.skip_element(kinds & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            STRUCT => {
                let mut last = 0i16;
                while let Some((_, t)) = self.field(&mut last)? {
                    self.skip(t, depth + 1)?;
                }
                Ok(())
            }
            other => Err(Bad(format!("an unknown value type {other}"))),
        }
    }

    /// Skips a list's, set's or map's element: a boolean is a byte there.
    fn skip_element(&mut self, ty: u8, depth: u32) -> Result<(), Bad> {
        if ty == 1 || ty == 2 {
            return self.byte().map(drop);
        }
        self.skip(ty, depth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compact-encoded schema of a root, `depth` nested groups and a leaf.
    fn nested(depth: usize) -> Vec<u8> {
        let mut out = vec![0x29, 0xfc]; // field 2, list; list header: structs, count follows
        let mut count = Vec::new();
        let mut n = (depth + 2) as u64;
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                count.push(b);
                break;
            }
            count.push(b | 0x80);
        }
        out.extend(count);
        for i in 0..depth + 2 {
            // field 4 name "a" (binary), field 5 num_children 1 (i32, zigzag 2), or a leaf.
            out.extend([0x48, 1, b'a']);
            if i <= depth {
                out.extend([0x15, 2]);
            }
            out.push(0);
        }
        out.push(0);
        out
    }

    #[test]
    fn the_schema_depth_is_read_without_recursion() {
        assert_eq!(schema_depth(&nested(0)).ok(), Some(0));
        assert_eq!(schema_depth(&nested(3)).ok(), Some(3));
        // Deep enough to overflow a recursive reader: stopped at the cap.
        let deep = schema_depth(&nested(100_000)).unwrap_or(0);
        assert!(deep > MAX_DEPTH, "{deep}");
        // A footer cut short says so.
        let cut = nested(3);
        let err = schema_depth(&cut[..cut.len() / 2])
            .err()
            .unwrap_or_default();
        assert!(err.contains("ends inside"), "{err}");
    }

    #[test]
    fn a_page_header_is_read_or_found_short() {
        // type 0, uncompressed 5, compressed 5, data_page_header { num_values 1, encodings }.
        let header = [
            0x15, 0, 0x15, 10, 0x15, 10, 0x2c, 0x15, 2, 0x15, 0, 0x15, 6, 0x15, 6, 0, 0,
        ];
        let h = match page_header(&header) {
            Ok(Ok(h)) => h,
            _ => panic!("not read"),
        };
        assert_eq!(
            (h.len, h.uncompressed, h.compressed, h.values, h.rows),
            (17, 5, 5, Some(1), None)
        );
        assert!(page_header(&header[..9]).is_err());
    }
}
