//! Reports of a comparison: one row per design, as a table, JSON, Markdown or an HTML page
//! with charts and sequence diagrams. The data they render is [`crate::explore::Report`].

pub mod build;
pub mod charts;
pub mod html;
pub mod json;
pub mod matrix;
pub mod recommend;
pub mod research;
pub mod sequence;
pub mod stats;
pub mod table;
