//! Enums whose variants have names: each name written once, beside its variant.
//!
//! `named_enum!` declares the enum as written and generates, in an inherent `impl`,
//! `ALL` (every variant in declaration order), `COUNT` and `name()`, so that a variant
//! added to the enum cannot be missing from its list or its name table.

/// Declares a fieldless enum whose every variant is written `Variant => "name"`, with the
/// enum's and the variants' attributes and doc comments as usual, and generates
/// `pub const ALL: [Self; COUNT]` (declaration order), `pub const COUNT: usize` and
/// `pub fn name(self) -> &'static str`.
///
/// ```ignore
/// named_enum! {
///     /// What the user was told.
///     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
///     pub enum Told {
///         Success => "success",
///         Failure => "failure",
///     }
/// }
/// assert_eq!(Told::ALL.map(Told::name), ["success", "failure"]);
/// ```
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        #[allow(dead_code)]
        impl $name {
            /// How many variants there are.
            pub const COUNT: usize = [$($text),+].len();
            /// Every variant, in declaration order.
            pub const ALL: [$name; Self::COUNT] = [$($name::$variant),+];
            /// The variant's name, as printed (traces, reports, JSON, the command line).
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }
    };
}

pub(crate) use named_enum;

#[cfg(test)]
mod tests {
    named_enum! {
        /// A test enum.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        enum Told {
            /// Told success.
            Success => "success",
            Failure => "told failure",
        }
    }

    #[test]
    fn names_all_and_count_follow_the_declaration() {
        assert_eq!(Told::COUNT, 2);
        assert_eq!(Told::ALL, [Told::Success, Told::Failure]);
        assert_eq!(Told::ALL.map(Told::name), ["success", "told failure"]);
    }
}
