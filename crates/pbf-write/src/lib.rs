//! A small `.osm.pbf` writer (osmpbf only reads) for tests and benchmarks: an `OSMHeader`
//! blob, then `OSMData` blobs (zlib) of one primitive group each: DenseNodes, Ways or
//! Relations, in the order they are written. Protocol Buffers encoded by hand
//! (fileformat.proto / osmformat.proto of the OSM PBF format).

use anyhow::Result;
use flate2::{Compression, write::ZlibEncoder};
use std::collections::HashMap;
use std::io::Write;

/// Elements per primitive block (osmium writes 8,000).
const BLOCK_ELEMENTS: usize = 8_000;

/// A relation member's type, as `osmformat.proto` numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberType {
    Node = 0,
    Way = 1,
    Relation = 2,
}

/// A relation member.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    pub kind: MemberType,
    pub id: i64,
    pub role: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    Dense,
    Ways,
    Relations,
}

/// Writes elements in the order given; each run of one kind becomes its own blocks.
pub struct PbfWriter<W: Write> {
    out: W,
    group: Option<Group>,
    strings: HashMap<String, u32>,
    table: Vec<String>,
    count: usize,
    // DenseNodes columns (deltas applied on flush)
    ids: Vec<i64>,
    lats: Vec<i64>,
    lons: Vec<i64>,
    keys_vals: Vec<u32>,
    // encoded Way / Relation messages of the current group
    messages: Vec<u8>,
}

fn varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn key(buf: &mut Vec<u8>, field: u32, wire: u8) {
    varint(buf, (u64::from(field) << 3) | u64::from(wire));
}

fn bytes_field(buf: &mut Vec<u8>, field: u32, data: &[u8]) {
    key(buf, field, 2);
    varint(buf, data.len() as u64);
    buf.extend_from_slice(data);
}

fn int_field(buf: &mut Vec<u8>, field: u32, v: u64) {
    key(buf, field, 0);
    varint(buf, v);
}

fn packed(buf: &mut Vec<u8>, field: u32, values: impl Iterator<Item = u64>) {
    let mut body = Vec::new();
    for v in values {
        varint(&mut body, v);
    }
    bytes_field(buf, field, &body);
}

/// Delta-encoded, zigzagged (`sint64` packed).
fn packed_delta(buf: &mut Vec<u8>, field: u32, values: &[i64]) {
    let mut prev = 0i64;
    packed(
        buf,
        field,
        values.iter().map(|&v| {
            let d = v - prev;
            prev = v;
            zigzag(d)
        }),
    );
}

/// Degrees to the block's units (granularity 100 nanodegrees, no offset).
fn units(deg: f64) -> i64 {
    (deg * 1e7).round() as i64
}

impl<W: Write> PbfWriter<W> {
    /// Start a file: writes the `OSMHeader` blob.
    pub fn new(mut out: W) -> Result<Self> {
        let mut header = Vec::new();
        bytes_field(&mut header, 4, b"OsmSchema-V0.6");
        bytes_field(&mut header, 4, b"DenseNodes");
        bytes_field(&mut header, 16, b"gtb pbf_write");
        write_blob(&mut out, "OSMHeader", &header)?;
        Ok(PbfWriter {
            out,
            group: None,
            strings: HashMap::new(),
            table: Vec::new(),
            count: 0,
            ids: Vec::new(),
            lats: Vec::new(),
            lons: Vec::new(),
            keys_vals: Vec::new(),
            messages: Vec::new(),
        })
    }

    fn string(&mut self, s: &str) -> u32 {
        if self.table.is_empty() {
            // index 0 is reserved (the DenseNodes tag delimiter)
            self.table.push(String::new());
        }
        if let Some(&i) = self.strings.get(s) {
            return i;
        }
        let i = self.table.len() as u32;
        self.table.push(s.to_string());
        self.strings.insert(s.to_string(), i);
        i
    }

    fn start(&mut self, g: Group) -> Result<()> {
        if self.group != Some(g) || self.count >= BLOCK_ELEMENTS {
            self.flush()?;
            self.group = Some(g);
        }
        self.count += 1;
        Ok(())
    }

    pub fn node(&mut self, id: i64, lat: f64, lon: f64, tags: &[(&str, &str)]) -> Result<()> {
        self.start(Group::Dense)?;
        self.ids.push(id);
        self.lats.push(units(lat));
        self.lons.push(units(lon));
        for (k, v) in tags {
            let (k, v) = (self.string(k), self.string(v));
            self.keys_vals.extend([k, v]);
        }
        self.keys_vals.push(0);
        Ok(())
    }

    pub fn way(&mut self, id: i64, refs: &[i64], tags: &[(&str, &str)]) -> Result<()> {
        self.start(Group::Ways)?;
        let mut m = Vec::new();
        int_field(&mut m, 1, id as u64);
        self.tags(&mut m, tags);
        packed_delta(&mut m, 8, refs);
        bytes_field(&mut self.messages, 3, &m);
        Ok(())
    }

    pub fn relation(&mut self, id: i64, members: &[Member], tags: &[(&str, &str)]) -> Result<()> {
        self.start(Group::Relations)?;
        let mut m = Vec::new();
        int_field(&mut m, 1, id as u64);
        self.tags(&mut m, tags);
        let roles: Vec<u64> = members
            .iter()
            .map(|x| u64::from(self.string(x.role)))
            .collect();
        packed(&mut m, 8, roles.into_iter());
        let ids: Vec<i64> = members.iter().map(|x| x.id).collect();
        packed_delta(&mut m, 9, &ids);
        packed(&mut m, 10, members.iter().map(|x| x.kind as u64));
        bytes_field(&mut self.messages, 4, &m);
        Ok(())
    }

    fn tags(&mut self, m: &mut Vec<u8>, tags: &[(&str, &str)]) {
        let keys: Vec<u64> = tags
            .iter()
            .map(|(k, _)| u64::from(self.string(k)))
            .collect();
        let vals: Vec<u64> = tags
            .iter()
            .map(|(_, v)| u64::from(self.string(v)))
            .collect();
        packed(m, 2, keys.into_iter());
        packed(m, 3, vals.into_iter());
    }

    /// Write the current block, if any.
    fn flush(&mut self) -> Result<()> {
        let Some(g) = self.group.take() else {
            return Ok(());
        };
        let mut group = Vec::new();
        match g {
            Group::Dense => {
                let mut dense = Vec::new();
                packed_delta(&mut dense, 1, &self.ids);
                packed_delta(&mut dense, 8, &self.lats);
                packed_delta(&mut dense, 9, &self.lons);
                packed(&mut dense, 10, self.keys_vals.iter().map(|&x| u64::from(x)));
                bytes_field(&mut group, 2, &dense);
            }
            Group::Ways | Group::Relations => group.append(&mut self.messages),
        }
        if self.table.is_empty() {
            self.table.push(String::new());
        }
        let mut table = Vec::new();
        for s in &self.table {
            bytes_field(&mut table, 1, s.as_bytes());
        }
        let mut block = Vec::new();
        bytes_field(&mut block, 1, &table);
        bytes_field(&mut block, 2, &group);
        write_blob(&mut self.out, "OSMData", &block)?;
        self.strings.clear();
        self.table.clear();
        self.count = 0;
        self.ids.clear();
        self.lats.clear();
        self.lons.clear();
        self.keys_vals.clear();
        self.messages.clear();
        Ok(())
    }

    /// Write the last block and return the output.
    pub fn finish(mut self) -> Result<W> {
        self.flush()?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A blob: BlobHeader length (big-endian u32), BlobHeader, Blob (zlib_data).
fn write_blob(out: &mut impl Write, kind: &str, message: &[u8]) -> Result<()> {
    let mut z = ZlibEncoder::new(Vec::new(), Compression::fast());
    z.write_all(message)?;
    let zdata = z.finish()?;
    let mut blob = Vec::new();
    int_field(&mut blob, 2, message.len() as u64);
    bytes_field(&mut blob, 3, &zdata);
    let mut header = Vec::new();
    bytes_field(&mut header, 1, kind.as_bytes());
    int_field(&mut header, 3, blob.len() as u64);
    out.write_all(&(header.len() as u32).to_be_bytes())?;
    out.write_all(&header)?;
    out.write_all(&blob)?;
    Ok(())
}
