//! The one Parquet writer of gtb: the POI store and the exports write through it, so both give
//! files that polars, pyarrow (also before 16) and Hugging Face `datasets` read.

use polars::prelude::{
    ArrowDataType, ArrowField, ArrowSchema, BatchedWriter, CompatLevel, KeyValueMetadata,
    ParquetCompression, ParquetWriter, PolarsResult, Schema, SchemaExt, StatisticsOptions,
};

/// The classic Arrow type of a column: `string` and `list` rather than polars' `string_view`
/// (unreadable by pyarrow before 16) and `large_list` (unknown to `datasets` before 3).
fn classic(dtype: &ArrowDataType) -> ArrowDataType {
    match dtype {
        ArrowDataType::LargeUtf8 | ArrowDataType::Utf8View => ArrowDataType::Utf8,
        ArrowDataType::LargeList(f) | ArrowDataType::List(f) => {
            ArrowDataType::List(Box::new(ArrowField {
                dtype: classic(&f.dtype),
                ..f.as_ref().clone()
            }))
        }
        other => other.clone(),
    }
}

/// Parquet settings: zstd; string statistics cut to 64 bytes (the long JSON columns would
/// otherwise copy two whole values per row group into the footer); and an Arrow schema hint
/// with the [`classic`] types, which readers use to pick in-memory types (the Parquet column
/// types are the same either way), so that older pyarrow and `datasets` load the files too.
pub fn writer_for<W: std::io::Write>(file: W, schema: &Schema) -> PolarsResult<BatchedWriter<W>> {
    let arrow: ArrowSchema = schema
        .to_arrow(CompatLevel::oldest())
        .iter_values()
        .map(|f| ArrowField {
            dtype: classic(&f.dtype),
            ..f.clone()
        })
        .collect();
    let hint = polars_parquet::write::schema_to_metadata_key(&arrow);
    ParquetWriter::new(file)
        .with_key_value_metadata(Some(KeyValueMetadata::Static(vec![hint])))
        .with_compression(ParquetCompression::Zstd(None))
        .with_statistics(StatisticsOptions {
            binary_statistics_truncate_length: Some(64),
            ..Default::default()
        })
        .batched(schema)
}
