//! The provider comparison: a model run against every provider preset (`--each-provider`),
//! one table per model file, with the assumptions each `*` stands for.

use super::ModelPart;
use super::tables::{Table, per_intent, percent};

/// The provider comparison of each model run with `--each-provider`: per design (rows) and
/// preset (columns), duplicate effects per intent and the share of intents left unresolved,
/// marked `†` when some intent was told a false outcome and `*` when an assumption of the
/// design's guarantee does not hold against the preset. One table per model file.
pub fn provider_tables(parts: &[ModelPart]) -> Vec<(String, Table)> {
    let mut files: Vec<&str> = Vec::new();
    for p in parts.iter().filter(|p| p.provider.is_some()) {
        if !files.contains(&p.file.as_str()) {
            files.push(&p.file);
        }
    }
    files
        .into_iter()
        .map(|file| {
            let group: Vec<&ModelPart> = parts
                .iter()
                .filter(|p| p.provider.is_some() && p.file == file)
                .collect();
            let mut head = vec!["design".to_string()];
            head.extend(group.iter().map(|p| p.provider.clone().unwrap_or_default()));
            let mut t = Table {
                head,
                rows: Vec::new(),
            };
            let designs: Vec<&str> = group[0]
                .report
                .results
                .iter()
                .map(|r| r.design.as_str())
                .collect();
            for d in designs {
                let mut row = vec![d.to_string()];
                for p in &group {
                    let cell = p.report.results.iter().find(|r| r.design == d).map(|r| {
                        let m = &r.metrics;
                        let n = m.intents.max(1) as f64;
                        format!(
                            "{} / {} / {}{}{}",
                            per_intent(m.duplicate_effects, m.intents),
                            percent(m.completed as f64 / n),
                            percent(m.unresolved as f64 / n),
                            if m.false_success + m.false_failure > 0 {
                                " †"
                            } else {
                                ""
                            },
                            if r.failed_assumptions().next().is_some() {
                                " *"
                            } else {
                                ""
                            }
                        )
                    });
                    row.push(cell.unwrap_or_else(|| "n/a".to_string()));
                }
                t.rows.push(row);
            }
            (file.to_string(), t)
        })
        .collect()
}

/// What a provider table's cells mean.
pub const PROVIDER_TABLE_NOTE: &str = "Columns are provider presets (the `no_dedup` column is the provider that ignores keys), rows are designs. Each cell: duplicate effects per intent / share of intents completed / share left unresolved (for a person to settle); † some intent was told a false success or failure; * an assumption of the design's guarantee does not hold against this preset (listed below). A design that states no assumption promises nothing. The scenario is the same in every column: only the provider's contract changes (its failure environment, processing time and 5xx after commit, is the model's).";

/// For each `*` of a provider table: the design, the preset and the assumptions that do not
/// hold.
pub fn provider_footnotes(parts: &[ModelPart], file: &str) -> Vec<String> {
    let mut out = Vec::new();
    for p in parts
        .iter()
        .filter(|p| p.provider.is_some() && p.file == file)
    {
        for r in &p.report.results {
            let broken: Vec<&str> = r.failed_assumptions().map(|a| a.name.as_str()).collect();
            if !broken.is_empty() {
                out.push(format!(
                    "`{}` against `{}`: {}",
                    r.design,
                    p.provider.as_deref().unwrap_or_default(),
                    broken.join(", ")
                ));
            }
        }
    }
    out
}
