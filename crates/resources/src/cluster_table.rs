//! `city_clusters/clusters.csv`: the destination clusters `gtb clusters` writes (see
//! `gtb_clusters`), read back and checked against the loaded cities.

use super::table::read_csv;
use super::{Cluster, InputError, Resources};
use std::path::Path;

/// Load a cluster table, checking every city and the region.
pub fn load(path: &Path, res: &Resources) -> Result<Vec<Cluster>, InputError> {
    read_csv(path, |r| {
        let names = r.list("cities")?;
        if names.is_empty() || names.len() > 3 {
            return Err(r.err(
                "cities",
                format!("a cluster has 1..3 cities, found {}", names.len()),
            ));
        }
        let mut cities = Vec::new();
        for n in &names {
            let id = res
                .city_id(n)
                .ok_or_else(|| r.err("cities", format!("unknown city {n:?}")))?;
            if res.attractions[id as usize].is_empty() {
                return Err(r.err(
                    "cities",
                    format!("{n:?} has no attractions, so it cannot be a destination"),
                ));
            }
            cities.push(id);
        }
        Ok(Cluster {
            id: r.text("id")?,
            region: r.text("region")?,
            cities,
        })
    })
}
