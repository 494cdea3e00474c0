//! Reports of a comparison: one row per design, as a table, JSON, Markdown or an HTML page
//! with charts and sequence diagrams. The data they render is [`crate::explore::Report`].

pub mod build;
pub(crate) mod charts;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod matrix;
pub(crate) mod recommend;
pub mod research;
pub mod sequence;
pub(crate) mod stats;
pub(crate) mod table;

pub use matrix::{Cell, Column, Matrix, REPLAY_PROGRAM, guarantee_matrix};
