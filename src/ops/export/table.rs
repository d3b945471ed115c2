//! Tables out of dragnet: a fixed schema of typed columns, written row by row as Parquet (the
//! `parquet` crate's column writer, zstd pages, row groups of [`ROW_GROUP_ROWS`] rows or
//! [`ROW_GROUP_BYTES`] of strings, whichever comes first) or JSON Lines. Memory is one row group,
//! whatever the table's length. The file is written under a temporary name and published when
//! complete ([`crate::storage::AtomicFile`]).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, ZstdLevel};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;

use crate::error::{Error, IoContext, Result};
use crate::storage::AtomicFile;

/// Rows per Parquet row group.
pub const ROW_GROUP_ROWS: usize = 64 * 1024;
/// String bytes per Parquet row group (a row group of long texts ends sooner).
pub const ROW_GROUP_BYTES: usize = 64 << 20;

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// UTF-8 string, never null.
    Str,
    /// UTF-8 string; an empty one is written as null.
    OptStr,
    /// 64-bit signed integer.
    Int,
    /// 64-bit float.
    Float,
    /// Boolean.
    Bool,
    /// A time, Unix milliseconds (Parquet `TIMESTAMP(MILLIS, UTC)`, JSON an RFC 3339 string);
    /// 0 is written as null.
    Time,
}

/// One column of a table.
#[derive(Debug, Clone, Copy)]
pub struct Col {
    /// Its name.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
}

impl Col {
    /// A column `name` of type `kind`.
    pub const fn new(name: &'static str, kind: Kind) -> Col {
        Col { name, kind }
    }
}

/// A value of one row, in column order; its variant must match the column's [`Kind`].
#[derive(Debug, Clone, Copy)]
pub enum Val<'a> {
    /// For [`Kind::Str`] and [`Kind::OptStr`].
    Str(&'a str),
    /// For [`Kind::Int`].
    Int(i64),
    /// For [`Kind::Float`].
    Float(f64),
    /// For [`Kind::Bool`].
    Bool(bool),
    /// For [`Kind::Time`]: Unix milliseconds.
    Time(i64),
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Apache Parquet.
    Parquet,
    /// One JSON object per line.
    Jsonl,
}

/// Where rows go.
pub struct TableWriter {
    cols: &'static [Col],
    path: PathBuf,
    out: Out,
    rows: u64,
}

enum Out {
    Jsonl(Box<BufWriter<AtomicFile>>),
    Parquet(Box<ParquetOut>),
}

struct ParquetOut {
    writer: SerializedFileWriter<AtomicFile>,
    columns: Vec<Column>,
    rows: usize,
    bytes: usize,
}

enum Column {
    Str {
        values: Vec<ByteArray>,
        defs: Vec<i16>,
        optional: bool,
    },
    Int {
        values: Vec<i64>,
        defs: Vec<i16>,
        optional: bool,
    },
    Float(Vec<f64>),
    Bool(Vec<bool>),
}

impl TableWriter {
    /// A table `name` of columns `cols` written to `path` in `format`.
    pub fn create(
        path: &Path,
        name: &str,
        cols: &'static [Col],
        format: Format,
    ) -> Result<TableWriter> {
        TableWriter::create_in(AtomicFile::create(path)?, name, cols, format)
    }

    /// As [`TableWriter::create`], into `file` (published as it says when the table is
    /// finished: [`crate::storage::out::Output::create_file`]).
    pub fn create_in(
        file: AtomicFile,
        name: &str,
        cols: &'static [Col],
        format: Format,
    ) -> Result<TableWriter> {
        let path = file.path().to_path_buf();
        let path = path.as_path();
        let out = match format {
            Format::Jsonl => Out::Jsonl(Box::new(BufWriter::with_capacity(1 << 16, file))),
            Format::Parquet => {
                let schema = parquet::schema::parser::parse_message_type(&message_type(name, cols))
                    .map_err(|e| Error::Internal(format!("parquet schema of {name}: {e}")))?;
                let props = WriterProperties::builder()
                    .set_compression(Compression::ZSTD(
                        ZstdLevel::try_new(3).expect("zstd level 3"),
                    ))
                    .set_created_by(concat!("dragnet ", env!("CARGO_PKG_VERSION")).into())
                    .build();
                let writer = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props))
                    .map_err(|e| parquet_error(path, e))?;
                let columns = cols
                    .iter()
                    .map(|c| match c.kind {
                        Kind::Str | Kind::OptStr => Column::Str {
                            values: Vec::new(),
                            defs: Vec::new(),
                            optional: c.kind == Kind::OptStr,
                        },
                        Kind::Int | Kind::Time => Column::Int {
                            values: Vec::new(),
                            defs: Vec::new(),
                            optional: c.kind == Kind::Time,
                        },
                        Kind::Float => Column::Float(Vec::new()),
                        Kind::Bool => Column::Bool(Vec::new()),
                    })
                    .collect();
                Out::Parquet(Box::new(ParquetOut {
                    writer,
                    columns,
                    rows: 0,
                    bytes: 0,
                }))
            }
        };
        Ok(TableWriter {
            cols,
            path: path.to_path_buf(),
            out,
            rows: 0,
        })
    }

    /// Appends a row: one value per column, in order.
    pub fn row(&mut self, vals: &[Val<'_>]) -> Result<()> {
        if vals.len() != self.cols.len() {
            return Err(Error::Internal(format!(
                "export row of {} values for {} columns",
                vals.len(),
                self.cols.len()
            )));
        }
        self.rows += 1;
        match &mut self.out {
            Out::Jsonl(w) => {
                let mut line = String::with_capacity(256);
                line.push('{');
                for (i, (c, v)) in self.cols.iter().zip(vals).enumerate() {
                    if i > 0 {
                        line.push(',');
                    }
                    line.push('"');
                    line.push_str(c.name);
                    line.push_str("\":");
                    json_value(&mut line, c.kind, *v);
                }
                line.push_str("}\n");
                w.write_all(line.as_bytes()).ctx("write", &self.path)
            }
            Out::Parquet(p) => {
                for ((c, v), col) in self.cols.iter().zip(vals).zip(&mut p.columns) {
                    p.bytes += push(col, c, *v)?;
                }
                p.rows += 1;
                if p.rows >= ROW_GROUP_ROWS || p.bytes >= ROW_GROUP_BYTES {
                    flush(p, &self.path)?;
                }
                Ok(())
            }
        }
    }

    /// Writes what is buffered and publishes the file. Returns the rows written.
    pub fn finish(self) -> Result<u64> {
        let path = self.path;
        match self.out {
            Out::Jsonl(w) => {
                let file = w
                    .into_inner()
                    .map_err(|e| Error::io("write", &path, e.into_error()))?;
                file.commit()?;
            }
            Out::Parquet(mut p) => {
                flush(&mut p, &path)?;
                let file = p.writer.into_inner().map_err(|e| parquet_error(&path, e))?;
                file.commit()?;
            }
        }
        Ok(self.rows)
    }
}

fn parquet_error(path: &Path, e: parquet::errors::ParquetError) -> Error {
    Error::io("write parquet", path, std::io::Error::other(e.to_string()))
}

/// The Parquet schema of a table.
fn message_type(name: &str, cols: &[Col]) -> String {
    let mut s = format!("message {name} {{\n");
    for c in cols {
        let t = match c.kind {
            Kind::Str => "REQUIRED BYTE_ARRAY {} (STRING);",
            Kind::OptStr => "OPTIONAL BYTE_ARRAY {} (STRING);",
            Kind::Int => "REQUIRED INT64 {};",
            Kind::Float => "REQUIRED DOUBLE {};",
            Kind::Bool => "REQUIRED BOOLEAN {};",
            Kind::Time => "OPTIONAL INT64 {} (TIMESTAMP(MILLIS,true));",
        };
        s.push_str("  ");
        s.push_str(&t.replace("{}", c.name));
        s.push('\n');
    }
    s.push('}');
    s
}

fn mismatch(c: &Col, v: Val<'_>) -> Error {
    Error::Internal(format!(
        "export column {} ({:?}) given {v:?}",
        c.name, c.kind
    ))
}

/// Buffers one value; returns the string bytes it added.
fn push(col: &mut Column, c: &Col, v: Val<'_>) -> Result<usize> {
    match (col, v) {
        (
            Column::Str {
                values,
                defs,
                optional,
            },
            Val::Str(s),
        ) => {
            if *optional && s.is_empty() {
                defs.push(0);
                return Ok(0);
            }
            defs.push(1);
            values.push(ByteArray::from(s.as_bytes().to_vec()));
            Ok(s.len())
        }
        (
            Column::Int {
                values,
                defs,
                optional,
            },
            Val::Int(i) | Val::Time(i),
        ) => {
            if *optional && i == 0 {
                defs.push(0);
            } else {
                defs.push(1);
                values.push(i);
            }
            Ok(0)
        }
        (Column::Float(values), Val::Float(f)) => {
            values.push(f);
            Ok(0)
        }
        (Column::Bool(values), Val::Bool(b)) => {
            values.push(b);
            Ok(0)
        }
        (_, v) => Err(mismatch(c, v)),
    }
}

/// Writes the buffered rows as one row group.
fn flush(p: &mut ParquetOut, path: &Path) -> Result<()> {
    if p.rows == 0 {
        return Ok(());
    }
    let pe = |e| parquet_error(path, e);
    let mut rg = p.writer.next_row_group().map_err(pe)?;
    for col in &mut p.columns {
        let mut w = rg
            .next_column()
            .map_err(pe)?
            .ok_or_else(|| Error::Internal("parquet: fewer columns than the schema".into()))?;
        match col {
            Column::Str {
                values,
                defs,
                optional,
            } => {
                let defs_arg = optional.then_some(&defs[..]);
                w.typed::<ByteArrayType>()
                    .write_batch(values, defs_arg, None)
                    .map_err(pe)?;
                values.clear();
                defs.clear();
            }
            Column::Int {
                values,
                defs,
                optional,
            } => {
                let defs_arg = optional.then_some(&defs[..]);
                w.typed::<Int64Type>()
                    .write_batch(values, defs_arg, None)
                    .map_err(pe)?;
                values.clear();
                defs.clear();
            }
            Column::Float(values) => {
                w.typed::<DoubleType>()
                    .write_batch(values, None, None)
                    .map_err(pe)?;
                values.clear();
            }
            Column::Bool(values) => {
                w.typed::<BoolType>()
                    .write_batch(values, None, None)
                    .map_err(pe)?;
                values.clear();
            }
        }
        w.close().map_err(pe)?;
    }
    rg.close().map_err(pe)?;
    p.rows = 0;
    p.bytes = 0;
    Ok(())
}

/// Appends `v` as JSON to `out`.
fn json_value(out: &mut String, kind: Kind, v: Val<'_>) {
    match v {
        Val::Str(s) if s.is_empty() && kind == Kind::OptStr => out.push_str("null"),
        Val::Str(s) => out.push_str(&serde_json::to_string(s).expect("strings serialize")),
        Val::Int(i) => out.push_str(&i.to_string()),
        Val::Float(f) if f.is_finite() => out.push_str(&f.to_string()),
        Val::Float(_) => out.push_str("null"),
        Val::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Val::Time(0) => out.push_str("null"),
        Val::Time(ms) => {
            let secs = ms.div_euclid(1000);
            let base = crate::util::rfc3339(secs.max(0) as u64);
            let base = base.strip_suffix('Z').unwrap_or(&base);
            out.push('"');
            out.push_str(base);
            out.push_str(&format!(".{:03}Z\"", ms.rem_euclid(1000)));
        }
    }
}
