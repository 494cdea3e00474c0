//! Sharded sweeps: `run`, `check` and `report` with `--shard I/N --out FILE` run one block of
//! the seeds and write a partial result; `retrylab merge` adds the partials up and prints
//! what the unsharded command prints. `explore` shards its search tree instead
//! ([`super::explore`]) and writes its partial in the same format.
//!
//! A partial is a JSON object:
//!
//! - `format`: `"retrylab-partial"`, `version`: 1, `tool`: `"retrylab VERSION"` (a merge
//!   takes partials of its own version only);
//! - `command`: `run`, `check`, `report` or `explore`;
//! - `shard`: `{index, count, first_seed, seeds}`, the shard I/N and its block of seeds
//!   (`explore`: 0 and 0; its shards split a search tree, see
//!   [`crate::explore::search::explore_shard`]);
//! - `options`: every option that determines the output, as the command line gave it;
//! - `models`: every model file read, `{path, hash}` (FNV-1a of the file's bytes, as the
//!   report's provenance gives it);
//! - `data`: the command's partial result: exact counts, histograms as their buckets,
//!   the first violating seeds, paired sums; shard 1 alone also carries the work that is
//!   not per seed (determinism sample, `explore` certification, guarantee matrix).
//!
//! Seeds FIRST..FIRST+SEEDS are cut into N contiguous blocks: block I is
//! `[FIRST + SEEDS·(I−1)/N, FIRST + SEEDS·I/N)`, empty when N > SEEDS leaves it no seed.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{CliError, Ctx, MergeArgs};
pub(super) use crate::explore::result::{Props, ResultData, append, property};

/// The `format` of a partial file.
pub(super) const FORMAT: &str = "retrylab-partial";
/// The `version` of the partial format this program writes and reads.
pub(super) const VERSION: u32 = 1;

/// This program as a partial names it: figures may change between versions, so a merge
/// takes partials of its own version only.
fn tool() -> String {
    format!("retrylab {}", env!("CARGO_PKG_VERSION"))
}

/// `--shard I/N`: shard I (from 1) of N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Parses `I/N` with 1 ≤ I ≤ N.
pub(super) fn parse_shard(s: &str) -> Result<Shard, String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("expected I/N, such as 1/4 (shard I of N, I from 1); got {s}"))?;
    let number = |x: &str, what: &str| {
        x.trim()
            .parse::<u64>()
            .map_err(|_| format!("{what} in I/N must be a whole number; got {x}"))
    };
    let (index, count) = (number(i, "I")?, number(n, "N")?);
    if count == 0 {
        return Err("N in I/N must be at least 1".into());
    }
    if index == 0 || index > count {
        return Err(format!("I in I/N runs from 1 to N ({count}); got {index}"));
    }
    Ok(Shard { index, count })
}

/// The block of seeds of `first..=last` a command runs, and whether it does the work done
/// once: all of them and yes without `--shard`; its shard's block, and whether it is shard
/// 1, with it.
pub(super) fn block_of(shard: Option<Shard>, (first, last): (u64, u64)) -> ((u64, u64), bool) {
    let count = last - first + 1;
    match shard {
        Some(s) => (s.block(first, count), s.is_first()),
        None => ((first, count), true),
    }
}

impl Shard {
    /// This shard's block of the seeds `first..first+seeds`: its first seed and how many.
    pub fn block(self, first: u64, seeds: u64) -> (u64, u64) {
        let at = |i: u64| (u128::from(seeds) * u128::from(i) / u128::from(self.count)) as u64;
        let (start, end) = (at(self.index - 1), at(self.index));
        (first + start, end - start)
    }

    /// This shard with its block of seeds, as a partial records it.
    pub fn info(self, (first_seed, seeds): (u64, u64)) -> ShardInfo {
        ShardInfo {
            index: self.index,
            count: self.count,
            first_seed,
            seeds,
        }
    }

    /// Whether this is shard 1, which alone does the work that is not per seed.
    pub fn is_first(self) -> bool {
        self.index == 1
    }
}

/// A model file a partial depends on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct ModelFile {
    pub path: String,
    pub hash: String,
}

impl ModelFile {
    /// The file at `path`, hashed.
    pub fn read(path: &Path) -> Result<ModelFile, CliError> {
        let bytes =
            std::fs::read(path).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
        Ok(ModelFile {
            path: path.display().to_string(),
            hash: crate::sim::hash::Fnv1a::hex(&bytes),
        })
    }
}

/// The block of a shard, as a partial records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct ShardInfo {
    pub index: u64,
    pub count: u64,
    pub first_seed: u64,
    pub seeds: u64,
}

/// A partial file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Partial {
    pub format: String,
    pub version: u32,
    /// The program that wrote it: `retrylab` and its version.
    pub tool: String,
    pub command: String,
    pub shard: ShardInfo,
    pub options: Value,
    pub models: Vec<ModelFile>,
    /// The warnings about the models that the unsharded command prints as it loads them
    /// (every shard loads the same models: the merge prints shard 1's).
    #[serde(default)]
    pub warnings: Vec<String>,
    pub data: Value,
}

/// A command that runs as shards and is merged: what its partial result holds, and how the
/// blocks, merged, are rendered as the unsharded command renders its own. `merge`
/// dispatches on the command a family of partials names.
pub(super) trait Sharded {
    /// The command's name, as a partial records it.
    const COMMAND: &'static str;
    /// Whether a shard takes a share of the search tree rather than a block of seeds.
    const SPLITS_TREE: bool = false;
    /// The options that determine the output (a partial records them).
    type Options: Serialize + for<'de> Deserialize<'de>;
    /// What one shard gives.
    type Data: Serialize + for<'de> Deserialize<'de>;

    /// Whether the merge's own options are enough to render (`merge --out DIR` for a
    /// report), before any partial is decoded.
    fn ready(_merge: &MergeArgs) -> Result<(), CliError> {
        Ok(())
    }

    /// Whether `data`, of shard `info`, reads back and tallies with its block; says what is
    /// wrong.
    fn check(data: &Self::Data, info: &ShardInfo, props: Props<'_>) -> Result<(), String>;

    /// Renders the shards' data (in shard order, shard 1 first) as the unsharded command
    /// does.
    fn render(
        ctx: &Ctx,
        options: &Self::Options,
        shards: Vec<(ShardInfo, Self::Data)>,
        merge: &MergeArgs,
    ) -> Result<(), CliError>;
}

/// Writes the partial of a shard (`shard`: which, and its block of seeds) to `out` and says
/// so on stdout.
pub(super) fn write_partial<C: Sharded>(
    ctx: &Ctx,
    out: &Path,
    shard: ShardInfo,
    options: &C::Options,
    models: Vec<ModelFile>,
    data: &C::Data,
) -> Result<(), CliError> {
    let command = C::COMMAND;
    let to_value = |x: Result<Value, serde_json::Error>| {
        x.map_err(|e| CliError::Other(format!("cannot encode the partial result: {e}")))
    };
    let partial = Partial {
        format: FORMAT.into(),
        version: VERSION,
        tool: tool(),
        command: command.into(),
        shard,
        options: to_value(serde_json::to_value(options))?,
        models,
        warnings: ctx.take_deferred(),
        data: to_value(serde_json::to_value(data))?,
    };
    let mut text = serde_json::to_string(&partial)
        .map_err(|e| CliError::Other(format!("cannot encode the partial result: {e}")))?;
    text.push('\n');
    std::fs::write(out, text)
        .map_err(|e| CliError::Other(format!("cannot write {}: {e}", out.display())))?;
    let block = (shard.first_seed, shard.seeds);
    let shard = Shard {
        index: shard.index,
        count: shard.count,
    };
    if C::SPLITS_TREE {
        return ctx.print(&format!(
            "wrote {}: {command} shard {shard}, its share of the search tree\n",
            out.display()
        ));
    }
    let seeds = match block.1 {
        0 => "no seed (more shards than seeds)".to_string(),
        1 => format!("seed {}", block.0),
        n => format!("seeds {}..={}", block.0, block.0 + (n - 1)),
    };
    ctx.print(&format!(
        "wrote {}: {command} shard {shard}, {seeds}{}\n",
        out.display(),
        if shard.is_first() {
            ", and the work done once"
        } else {
            ""
        }
    ))
}

/// The partials of one sharded command, each shard once, in shard order.
pub(super) struct Family {
    pub command: String,
    pub options: Value,
    /// `(file, partial)`, shard 1 first.
    pub parts: Vec<(PathBuf, Partial)>,
}

impl Family {
    /// The options, decoded for the command.
    pub fn options<O: for<'de> Deserialize<'de>>(&self) -> Result<O, CliError> {
        serde_json::from_value(self.options.clone()).map_err(|e| {
            CliError::Input(format!(
                "{}: options of {} that this program does not read: {e}",
                self.parts[0].0.display(),
                self.command
            ))
        })
    }

    /// Each shard's data, decoded and checked by `check` (which says what is wrong), in
    /// shard order.
    pub fn data<D: for<'de> Deserialize<'de>>(
        &self,
        check: impl Fn(&D, &ShardInfo) -> Result<(), String>,
    ) -> Result<Vec<D>, CliError> {
        self.parts
            .iter()
            .map(|(path, p)| {
                let damaged = |e: String| {
                    CliError::Input(format!("{}: a damaged partial file: {e}", path.display()))
                };
                let data: D =
                    serde_json::from_value(p.data.clone()).map_err(|e| damaged(e.to_string()))?;
                check(&data, &p.shard).map_err(damaged)?;
                Ok(data)
            })
            .collect()
    }
}

/// Reads `paths` and checks that they are one family: the same command, options and model
/// files, the same shard count N, and every shard 1..N exactly once.
///
/// `splits_tree` says whether a command's shards split a search tree ([`Sharded::SPLITS_TREE`]):
/// such a shard holds no block of seeds.
pub(super) fn read_family(
    paths: &[PathBuf],
    splits_tree: impl Fn(&str) -> bool,
) -> Result<Family, CliError> {
    let mut parts: Vec<(PathBuf, Partial)> = Vec::new();
    for path in paths {
        parts.push((path.clone(), read_partial(path)?));
    }
    let Some((first_path, first)) = parts.first().cloned() else {
        return Err(CliError::Input("merge: no partial file given".into()));
    };
    for (path, p) in &parts[1..] {
        same_command(p, &first).map_err(|what| {
            CliError::Input(format!(
                "{}: not of the same sharded command as {}: {what}",
                path.display(),
                first_path.display()
            ))
        })?;
    }
    every_shard_once(&parts, first.shard.count)?;
    parts.sort_by_key(|(_, p)| p.shard.index);
    seed_blocks(&parts, &first, splits_tree(&first.command))?;
    Ok(Family {
        command: first.command.clone(),
        options: first.options.clone(),
        parts,
    })
}

/// Reads the partial file at `path`: JSON, of this format, version and build, with a
/// shard I/N that exists.
fn read_partial(path: &Path) -> Result<Partial, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        CliError::Input(format!(
            "{}: not a partial file (not JSON: {e})",
            path.display()
        ))
    })?;
    if value.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(CliError::Input(format!(
            "{}: not a partial file (no \"format\": \"{FORMAT}\")",
            path.display()
        )));
    }
    match value.get("version").and_then(Value::as_u64) {
        Some(v) if v == u64::from(VERSION) => {}
        v => {
            return Err(CliError::Input(format!(
                "{}: partial format version {}, but this program reads version {VERSION}",
                path.display(),
                v.map_or_else(|| "missing".to_string(), |v| v.to_string())
            )));
        }
    }
    let partial: Partial = serde_json::from_value(value)
        .map_err(|e| CliError::Input(format!("{}: a damaged partial file: {e}", path.display())))?;
    if partial.tool != tool() {
        return Err(CliError::Input(format!(
            "{}: written by {}, but this is {}: run the shards and the merge with one build",
            path.display(),
            partial.tool,
            tool()
        )));
    }
    let s = partial.shard;
    if s.count == 0 || s.index == 0 || s.index > s.count {
        return Err(CliError::Input(format!(
            "{}: a damaged partial file: shard {}/{}",
            path.display(),
            s.index,
            s.count
        )));
    }
    Ok(partial)
}

/// The first way `p` is not of the same sharded command as `first`: the command, the
/// shard count, an option, a model file.
fn same_command(p: &Partial, first: &Partial) -> Result<(), String> {
    if p.command != first.command {
        return Err(format!(
            "a partial of {} here, of {} there",
            p.command, first.command
        ));
    }
    if p.shard.count != first.shard.count {
        return Err(format!(
            "{} shards here, {} there",
            p.shard.count, first.shard.count
        ));
    }
    if let Some(what) = option_difference(&p.options, &first.options) {
        return Err(what);
    }
    if let Some(what) = model_difference(&p.models, &first.models) {
        return Err(what);
    }
    Ok(())
}

/// Checks that `parts` hold every shard 1..=N of `n` exactly once.
fn every_shard_once(parts: &[(PathBuf, Partial)], n: u64) -> Result<(), CliError> {
    let mut by_index: BTreeMap<u64, usize> = BTreeMap::new();
    for (i, (path, p)) in parts.iter().enumerate() {
        if let Some(&j) = by_index.get(&p.shard.index) {
            return Err(CliError::Input(format!(
                "{}: shard {}/{n} given twice (also {})",
                path.display(),
                p.shard.index,
                parts[j].0.display()
            )));
        }
        by_index.insert(p.shard.index, i);
    }
    // N comes from a file: find the first missing shards in the gaps between the given
    // ones, never by walking 1..=N.
    let absent = n - by_index.len() as u64;
    if absent == 0 {
        return Ok(());
    }
    const SHOWN: usize = 8;
    let mut missing: Vec<String> = Vec::new();
    let mut next: u128 = 1;
    let ends = by_index.keys().map(|&i| u128::from(i));
    for end in ends.chain([u128::from(n) + 1]) {
        while next < end && missing.len() < SHOWN {
            missing.push(format!("{next}/{n}"));
            next += 1;
        }
        if missing.len() == SHOWN {
            break;
        }
        next = end + 1;
    }
    let more = match absent - missing.len() as u64 {
        0 => String::new(),
        k => format!(" and {k} more"),
    };
    Err(CliError::Input(format!(
        "merge: missing shard{} {}{more} (every shard 1..{n} must be given once)",
        if absent == 1 { "" } else { "s" },
        missing.join(", ")
    )))
}

/// Checks that each shard holds its block of the command's seeds; a command whose shards
/// split a search tree (`tree`) has none, and records an empty block.
fn seed_blocks(parts: &[(PathBuf, Partial)], first: &Partial, tree: bool) -> Result<(), CliError> {
    let seeds = first.options.get("seeds").and_then(Value::as_u64);
    let first_seed = first.options.get("first_seed").and_then(Value::as_u64);
    for (path, p) in parts {
        let s = p.shard;
        let expected = match seeds.zip(first_seed) {
            _ if tree => Some((0, 0)),
            block => block.map(|(seeds, first_seed)| {
                Shard {
                    index: s.index,
                    count: s.count,
                }
                .block(first_seed, seeds)
            }),
        };
        if expected != Some((s.first_seed, s.seeds)) {
            return Err(CliError::Input(format!(
                "{}: a damaged partial file: shard {}/{} does not hold its block of the seeds",
                path.display(),
                s.index,
                s.count
            )));
        }
    }
    Ok(())
}

/// The first option that differs, as `--seeds 100 here, 200 there`.
fn option_difference(here: &Value, there: &Value) -> Option<String> {
    let empty = serde_json::Map::new();
    let (a, b) = (
        here.as_object().unwrap_or(&empty),
        there.as_object().unwrap_or(&empty),
    );
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for k in keys {
        let (x, y) = (a.get(k), b.get(k));
        if x != y {
            let show =
                |v: Option<&Value>| v.map_or_else(|| "nothing".to_string(), Value::to_string);
            return Some(format!(
                "different {}: {} here, {} there",
                option_name(k),
                show(x),
                show(y)
            ));
        }
    }
    None
}

/// An option's key as the command line spells it: `first_seed` is `--first-seed`; the
/// model arguments are `MODEL`.
fn option_name(key: &str) -> String {
    match key {
        "model" | "models" => "MODEL".to_string(),
        k => format!("--{}", k.replace('_', "-")),
    }
}

/// The first model file that differs: another file, or the same with other contents.
fn model_difference(here: &[ModelFile], there: &[ModelFile]) -> Option<String> {
    for (a, b) in here.iter().zip(there) {
        if a.path != b.path {
            return Some(format!("model file {} here, {} there", a.path, b.path));
        }
        if a.hash != b.hash {
            return Some(format!(
                "a different model file {}: hash {} here, {} there (the file changed between the shards)",
                a.path, a.hash, b.hash
            ));
        }
    }
    (here.len() != there.len())
        .then(|| format!("{} model files here, {} there", here.len(), there.len()))
}

/// `--shard I/N --out FILE`.
#[derive(clap::Args, Debug, Default)]
pub(super) struct ShardArgs {
    /// Run only the I-th of N contiguous blocks of the seeds (I from 1) and write a
    /// partial result to --out instead of the output; `retrylab merge`
    /// of the N partials prints what the command prints unsharded. Work that is not per
    /// seed (the determinism sample, explore certification, the guarantee matrix) is done
    /// by shard 1 alone. A shard that wrote its partial exits 0; the merge has the verdict.
    #[arg(long, value_name = "I/N", value_parser = parse_shard, requires = "out")]
    pub(super) shard: Option<Shard>,
    /// With --shard: the partial result file to write.
    #[arg(long = "out", value_name = "FILE", requires = "shard")]
    pub(super) out: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_seeds_once_in_order() {
        for (seeds, n) in [(10, 4), (3, 5), (1, 1), (1000, 7), (u64::MAX - 5, 3)] {
            let mut next = 5;
            let mut total = 0u128;
            for index in 1..=n {
                let (first, count) = Shard { index, count: n }.block(5, seeds);
                assert_eq!(first, next);
                next = first.wrapping_add(count);
                total += u128::from(count);
            }
            assert_eq!(total, u128::from(seeds));
        }
        assert_eq!(Shard { index: 2, count: 4 }.block(0, 10), (2, 3));
        assert_eq!(Shard { index: 1, count: 5 }.block(0, 3), (0, 0));
    }

    #[test]
    fn shard_arguments_are_checked() {
        assert_eq!(parse_shard("2/4"), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(parse_shard("1/1"), Ok(Shard { index: 1, count: 1 }));
        for bad in ["0/4", "5/4", "a/b", "1/0", "3", "-1/4"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
