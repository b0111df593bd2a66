//! `gtb import release`: not written yet (being implemented on its own branch).

use super::ImportContext;
use crate::store::StoreBuilder;
use anyhow::{Result, bail};

pub fn import(_ctx: &ImportContext, _out: &mut StoreBuilder) -> Result<()> {
    bail!("the release adapter is not available in this build")
}
