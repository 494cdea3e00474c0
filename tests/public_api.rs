//! The public API, as a committed listing (`api/retrylab.txt`) that this test regenerates
//! from the source and compares: a change of the public surface (an item added, removed or
//! changed in signature) fails here until the listing is blessed with it, so that it is seen
//! and reviewed in the commit, never made by accident.
//!
//! ```text
//! RETRYLAB_BLESS=1 cargo test --release --test suite public_api::
//! ```
//!
//! It runs on the stable toolchain: syn reads `src/` (rustdoc's JSON output, which
//! cargo-public-api reads, needs nightly), prettyplease prints each item. What it lists,
//! module by module from `src/lib.rs` through every module: each `pub` item with its
//! signature (function bodies left out, constants with their values), a struct's `pub`
//! fields (the others as one `..` comment), an enum's variants, a trait's items, the `pub`
//! functions and constants of every inherent `impl` and the header of every trait `impl`,
//! and each `pub use`; items a macro generates, as the invocation that generates them.
//! Documentation and attributes are left out but `derive`, `repr`, `non_exhaustive` and
//! `cfg`. A crate-private module is listed too, under a heading that says so: its `pub`
//! items are API where a public module re-exports them, and its impls of public types are
//! API; `#[cfg(test)]` items are not part of the API.

use crate::common::golden;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use syn::{Attribute, Fields, ImplItem, Item, TraitItem, Visibility};

/// Is `v` plain `pub` (not `pub(crate)`, not private)?
fn public(v: &Visibility) -> bool {
    matches!(v, Visibility::Public(_))
}

/// Whether `attrs` hold `#[cfg(test)]`.
fn test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// The attributes that are part of the API.
fn kept(attrs: &[Attribute]) -> Vec<Attribute> {
    attrs
        .iter()
        .filter(|a| {
            ["derive", "repr", "non_exhaustive", "cfg"]
                .iter()
                .any(|k| a.path().is_ident(k))
        })
        .cloned()
        .collect()
}

/// `tokens` without the doc comments in them (`#[doc = "..."]`, at any depth): an
/// invocation's documentation is not its API.
fn without_docs(tokens: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut it = tokens.into_iter().peekable();
    while let Some(t) = it.next() {
        if let TokenTree::Punct(p) = &t
            && p.as_char() == '#'
            && let Some(TokenTree::Group(g)) = it.peek()
            && g.delimiter() == Delimiter::Bracket
            && matches!(g.stream().into_iter().next(), Some(TokenTree::Ident(i)) if i == "doc")
        {
            it.next();
            continue;
        }
        out.push(match t {
            TokenTree::Group(g) => {
                TokenTree::Group(Group::new(g.delimiter(), without_docs(g.stream())))
            }
            other => other,
        });
    }
    out.into_iter().collect()
}

/// An empty function body: what a signature is shown with.
fn no_body() -> syn::Block {
    syn::parse_quote!({})
}

/// `item` as the listing shows it, or `None` when it is not public.
fn shown(item: &Item) -> Option<Item> {
    let mut item = item.clone();
    match &mut item {
        Item::Fn(f) if public(&f.vis) => {
            f.attrs = kept(&f.attrs);
            *f.block = no_body();
        }
        Item::Struct(s) if public(&s.vis) => {
            s.attrs = kept(&s.attrs);
            let hide = |fields: &mut syn::punctuated::Punctuated<syn::Field, syn::Token![,]>| {
                let all = fields.len();
                let kept: Vec<syn::Field> = fields
                    .iter()
                    .filter(|f| public(&f.vis))
                    .map(|f| syn::Field {
                        attrs: kept(&f.attrs),
                        ..f.clone()
                    })
                    .collect();
                let private = all - kept.len();
                *fields = kept.into_iter().collect();
                private
            };
            let private = match &mut s.fields {
                Fields::Named(n) => hide(&mut n.named),
                Fields::Unnamed(u) => hide(&mut u.unnamed),
                Fields::Unit => 0,
            };
            if private > 0 {
                // A marker field the reader cannot miss: the struct has private fields.
                let marker: syn::Field = match &s.fields {
                    Fields::Unnamed(_) => syn::parse_quote!(PrivateFields),
                    _ => {
                        let name = format!("private_fields_{private}");
                        let ident: syn::Ident = syn::parse_str(&name).unwrap();
                        syn::parse_quote!(#ident: ())
                    }
                };
                match &mut s.fields {
                    Fields::Named(n) => n.named.push(marker),
                    Fields::Unnamed(u) => u.unnamed.push(marker),
                    Fields::Unit => {}
                }
            }
        }
        Item::Enum(e) if public(&e.vis) => {
            e.attrs = kept(&e.attrs);
            for v in &mut e.variants {
                v.attrs = kept(&v.attrs);
                for f in v.fields.iter_mut() {
                    f.attrs = kept(&f.attrs);
                }
            }
        }
        Item::Trait(t) if public(&t.vis) => {
            t.attrs = kept(&t.attrs);
            for i in &mut t.items {
                match i {
                    TraitItem::Fn(f) => {
                        f.attrs = kept(&f.attrs);
                        if f.default.is_some() {
                            f.default = Some(no_body());
                        }
                    }
                    TraitItem::Const(c) => c.attrs = kept(&c.attrs),
                    TraitItem::Type(t) => t.attrs = kept(&t.attrs),
                    _ => {}
                }
            }
        }
        Item::Const(c) if public(&c.vis) => c.attrs = kept(&c.attrs),
        Item::Static(s) if public(&s.vis) => s.attrs = kept(&s.attrs),
        Item::Type(t) if public(&t.vis) => t.attrs = kept(&t.attrs),
        Item::Use(u) if public(&u.vis) => u.attrs = kept(&u.attrs),
        Item::Impl(i) => {
            i.attrs = kept(&i.attrs);
            if i.trait_.is_some() {
                // A trait impl is API as a whole: its header says it, with its associated
                // types (`type Err = String`).
                i.items.retain_mut(|it| match it {
                    ImplItem::Type(t) => {
                        t.attrs = kept(&t.attrs);
                        true
                    }
                    _ => false,
                });
            } else {
                i.items.retain_mut(|it| match it {
                    ImplItem::Fn(f) if public(&f.vis) && !test_only(&f.attrs) => {
                        f.attrs = kept(&f.attrs);
                        f.block = no_body();
                        true
                    }
                    ImplItem::Const(c) if public(&c.vis) => {
                        c.attrs = kept(&c.attrs);
                        true
                    }
                    _ => false,
                });
                if i.items.is_empty() {
                    return None;
                }
            }
        }
        // An exported macro, and an invocation at item level that is not a definition: the
        // items it generates (`counters!`'s `Metrics`, the ids of `vocab::ids`) are listed
        // as the invocation that makes them, which changes whenever they do.
        Item::Macro(m)
            if m.attrs.iter().any(|a| a.path().is_ident("macro_export"))
                || !(m.mac.path.is_ident("macro_rules") || m.mac.path.is_ident("thread_local")) =>
        {
            m.attrs = kept(&m.attrs);
            m.mac.tokens = without_docs(m.mac.tokens.clone());
        }
        _ => return None,
    }
    Some(item)
}

/// An invocation of `named_enum!` (`src/sim/named.rs`) as what it generates: the enum as
/// declared (each `Variant => "name"` a plain variant), and an impl with `COUNT`, `ALL` and
/// `name`. `None` for any other macro.
fn named_enum(m: &syn::ItemMacro) -> Option<Vec<Item>> {
    if m.mac.path.segments.last()?.ident != "named_enum" {
        return None;
    }
    let mut tokens: Vec<TokenTree> = m.mac.tokens.clone().into_iter().collect();
    let Some(TokenTree::Group(variants)) = tokens.pop() else {
        panic!("named_enum! without its variants: {}", m.mac.tokens);
    };
    let mut plain = Vec::new();
    let mut it = variants.stream().into_iter();
    while let Some(t) = it.next() {
        match &t {
            // `=>` and the name after it.
            TokenTree::Punct(p) if p.as_char() == '=' => {
                it.next();
                it.next();
            }
            _ => plain.push(t),
        }
    }
    tokens.push(TokenTree::Group(Group::new(
        Delimiter::Brace,
        plain.into_iter().collect(),
    )));
    let e: syn::ItemEnum = syn::parse2(tokens.into_iter().collect())
        .unwrap_or_else(|err| panic!("named_enum! {}: {err}", m.mac.tokens));
    let name = &e.ident;
    let n = proc_macro2::Literal::usize_unsuffixed(e.variants.len());
    let each = e.variants.iter().map(|v| &v.ident);
    let generated: syn::ItemImpl = syn::parse_quote! {
        impl #name {
            pub const COUNT: usize = #n;
            pub const ALL: [#name; #n] = [#(#name::#each),*];
            pub fn name(self) -> &'static str {}
        }
    };
    Some(vec![Item::Enum(e), Item::Impl(generated)])
}

/// The file of module `name` declared in the file at `parent` (as `mod name;`).
fn module_file(parent: &Path, name: &str) -> PathBuf {
    let dir = if parent
        .file_name()
        .is_some_and(|f| f == "lib.rs" || f == "mod.rs")
    {
        parent.parent().unwrap().to_path_buf()
    } else {
        parent.with_extension("")
    };
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        flat
    } else {
        dir.join(name).join("mod.rs")
    }
}

/// Lists the public items of module `path` (its items `items`, in the file `file`) into
/// `out`; counts them in `count`.
///
/// Every module is walked, not only the public ones: a crate-private module's `pub` items
/// are API wherever a public module re-exports them (`pub use schema::*`), and its impls
/// of public types are API too, so they are listed under a heading that says the module
/// itself is not reachable (`reachable` false).
fn list(
    path: &str,
    reachable: bool,
    file: &Path,
    items: &[Item],
    out: &mut String,
    count: &mut usize,
) {
    let mut here = Vec::new();
    let mut submodules = Vec::new();
    for item in items {
        if let Item::Mod(m) = item {
            if !test_only(&m.attrs) {
                submodules.push(m);
            }
            continue;
        }
        let attrs: &[Attribute] = match item {
            Item::Fn(f) => &f.attrs,
            Item::Impl(i) => &i.attrs,
            Item::Struct(s) => &s.attrs,
            Item::Enum(e) => &e.attrs,
            Item::Const(c) => &c.attrs,
            Item::Static(s) => &s.attrs,
            Item::Trait(t) => &t.attrs,
            Item::Type(t) => &t.attrs,
            Item::Use(u) => &u.attrs,
            Item::Macro(m) => &m.attrs,
            _ => &[],
        };
        if test_only(attrs) {
            continue;
        }
        if let Item::Macro(m) = item
            && let Some(generated) = named_enum(m)
        {
            here.extend(generated.iter().filter_map(shown));
            continue;
        }
        if let Some(shown) = shown(item) {
            here.push(shown);
        }
    }
    if !here.is_empty() {
        *count += here.len();
        if reachable {
            let _ = writeln!(out, "// {path}");
        } else {
            let _ = writeln!(out, "// {path} (crate-private: API where re-exported)");
        }
        let text = prettyplease::unparse(&syn::File {
            shebang: None,
            attrs: Vec::new(),
            items: here,
        });
        out.push_str(&text);
        out.push('\n');
    }
    for m in submodules {
        let name = m.ident.to_string();
        let sub = format!("{path}::{name}");
        let reachable = reachable && public(&m.vis);
        match &m.content {
            Some((_, inline)) => list(&sub, reachable, file, inline, out, count),
            None => {
                let f = module_file(file, &name);
                let parsed = parse(&f);
                list(&sub, reachable, &f, &parsed.items, out, count);
            }
        }
    }
}

fn parse(file: &Path) -> syn::File {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// The listing of the crate's public API, and how many items it has.
fn listing() -> (String, usize) {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let mut out = String::new();
    let mut count = 0;
    list(
        "retrylab",
        true,
        &lib,
        &parse(&lib).items,
        &mut out,
        &mut count,
    );
    (out, count)
}

#[test]
fn the_public_api_is_the_committed_listing() {
    let (text, count) = listing();
    let header = format!(
        "// The public API of retrylab: {count} items. Generated by tests/public_api.rs;\n\
         // bless a deliberate change with RETRYLAB_BLESS=1 cargo test --release --test suite public_api::\n\n"
    );
    let mut g = golden::Golden::in_project("api");
    g.check("retrylab.txt", &(header + &text));
    g.finish();
}

/// The lister itself: what it keeps and what it leaves out.
#[test]
fn the_listing_keeps_signatures_and_leaves_out_bodies_and_private_items() {
    let file: syn::File = syn::parse_quote! {
        /// A doc comment.
        #[derive(Clone)]
        pub struct S { pub a: u32, b: u32, c: u32 }
        struct Hidden;
        pub(crate) fn crate_only() {}
        impl S {
            pub fn new() -> S { S { a: 0, b: 0, c: 0 } }
            fn private(&self) {}
        }
        impl Default for S { fn default() -> S { S::new() } }
        #[cfg(test)]
        pub fn test_only() {}
        pub const N: u32 = 3;
        pub(crate) mod inner {
            pub struct T;
            pub(crate) struct U;
        }
        pub use inner::T;
    };
    let mut out = String::new();
    let mut count = 0;
    list(
        "x",
        true,
        Path::new("lib.rs"),
        &file.items,
        &mut out,
        &mut count,
    );
    assert_eq!(count, 6, "{out}");
    // A crate-private module's pub items, under a heading that says it is not reachable.
    assert!(
        out.contains("// x::inner (crate-private: API where re-exported)\npub struct T;\n"),
        "{out}"
    );
    assert!(out.contains("pub use inner::T;"), "{out}");
    assert!(!out.contains("struct U"), "{out}");
    assert!(
        out.contains(
            "#[derive(Clone)]\npub struct S {\n    pub a: u32,\n    private_fields_2: (),\n}"
        ),
        "{out}"
    );
    assert!(
        out.contains("impl S {\n    pub fn new() -> S {}\n}"),
        "{out}"
    );
    assert!(out.contains("impl Default for S {}"), "{out}");
    assert!(out.contains("pub const N: u32 = 3;"), "{out}");
    for gone in [
        "Hidden",
        "crate_only",
        "fn private",
        "test_only",
        "doc comment",
    ] {
        assert!(!out.contains(gone), "{gone} listed:\n{out}");
    }
}
