//! Property test: ORDER BY's comparator is a total order on random mixes of numbers of every
//! type (around 2^53, where promotion to a double rounds), strings, language-tagged strings (with
//! and without base direction), IRIs, blank nodes, ill-formed literals, triple terms (nested, with
//! any of these as objects) and unbound values.

use oxrdf::{BaseDirection, BlankNode, Literal, NamedNode, NamedOrBlankNode, Term, Triple};
use proptest::prelude::*;
use quiver_expr::{order_terms, OrderedTerm};
use std::cmp::Ordering;

const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

fn typed(lexical: String, datatype: &str) -> Term {
    Literal::new_typed_literal(
        lexical,
        NamedNode::new_unchecked(format!("{XSD}{datatype}")),
    )
    .into()
}

/// The xsd:double / xsd:float lexical form of a value.
fn binary_lexical(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "INF" } else { "-INF" }.into()
    } else {
        format!("{v:e}")
    }
}

fn near_2_53() -> impl Strategy<Value = i64> {
    (-4_i64..=4).prop_map(|d| (1_i64 << 53) + d)
}

fn number() -> impl Strategy<Value = Term> {
    prop_oneof![
        near_2_53().prop_map(|i| typed(i.to_string(), "integer")),
        any::<i64>().prop_map(|i| typed(i.to_string(), "integer")),
        (near_2_53(), 0_u32..10).prop_map(|(i, f)| typed(format!("{i}.{f}"), "decimal")),
        (-1000_i64..1000, 0_u32..1000).prop_map(|(i, f)| typed(format!("{i}.{f:03}"), "decimal")),
        near_2_53().prop_map(|i| typed(binary_lexical(i as f64), "double")),
        any::<f64>().prop_map(|v| typed(binary_lexical(v), "double")),
        (-1000_i64..1000).prop_map(|i| typed(binary_lexical(i as f64 / 8.0), "double")),
        any::<f32>().prop_map(|v| typed(binary_lexical(f64::from(v)), "float")),
        near_2_53().prop_map(|i| typed(binary_lexical(i as f64), "float")),
        (-3_i64..3).prop_map(|i| typed(i.to_string(), "byte")),
        Just(typed("-0".into(), "double")),
        Just(typed("0.0".into(), "decimal")),
    ]
}

fn direction() -> impl Strategy<Value = BaseDirection> {
    prop_oneof![Just(BaseDirection::Ltr), Just(BaseDirection::Rtl)]
}

/// A term that is not a triple term.
fn leaf() -> impl Strategy<Value = Term> {
    prop_oneof![
        6 => number(),
        1 => "[a-c]{0,2}".prop_map(|s| Literal::new_simple_literal(s).into()),
        1 => ("[a-c]{0,2}", "en|fr|EN").prop_map(|(s, l)| {
            Literal::new_language_tagged_literal_unchecked(s, l).into()
        }),
        // Frequent, with few values: terms differing only by their direction are common.
        3 => ("[a-b]?", "en|fr", direction()).prop_map(|(s, l, d)| {
            Literal::new_directional_language_tagged_literal_unchecked(s, l, d).into()
        }),
        1 => "[a-c]{1,2}".prop_map(|s| NamedNode::new_unchecked(format!("http://e/{s}")).into()),
        1 => "[a-c]{1,2}".prop_map(|s| BlankNode::new_unchecked(s).into()),
        1 => "[a-z]{1,2}".prop_map(|s| typed(s, "integer")),
    ]
}

/// A subject of a triple term: an IRI or a blank node.
fn subject() -> impl Strategy<Value = NamedOrBlankNode> {
    prop_oneof![
        "[a-b]".prop_map(|s| NamedNode::new_unchecked(format!("http://e/{s}")).into()),
        "[a-b]".prop_map(|s| BlankNode::new_unchecked(s).into()),
    ]
}

/// Triple terms with the objects `object` generates.
fn triple_of(object: impl Strategy<Value = Term>) -> impl Strategy<Value = Term> {
    (subject(), "[p-q]", object).prop_map(|(s, p, o)| {
        Triple::new(s, NamedNode::new_unchecked(format!("http://e/{p}")), o).into()
    })
}

/// Any term: mostly leaves, and triple terms nested up to two levels deep.
fn any_term() -> impl Strategy<Value = Term> {
    prop_oneof![
        8 => leaf(),
        2 => triple_of(leaf()),
        1 => triple_of(triple_of(leaf())),
    ]
}

fn term() -> impl Strategy<Value = Option<Term>> {
    prop_oneof![
        12 => any_term().prop_map(Some),
        1 => Just(None),
    ]
}

fn cmp(a: &Option<Term>, b: &Option<Term>) -> Ordering {
    order_terms(a.as_ref(), b.as_ref())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn order_is_antisymmetric_transitive_and_strict(a in term(), b in term(), c in term()) {
        prop_assert_eq!(cmp(&a, &b), cmp(&b, &a).reverse(), "{:?} vs {:?}", a, b);
        prop_assert_eq!(cmp(&a, &b) == Ordering::Equal, a == b, "{:?} vs {:?}", a, b);
        for (x, y, z) in [(&a, &b, &c), (&a, &c, &b), (&b, &a, &c), (&b, &c, &a), (&c, &a, &b), (&c, &b, &a)] {
            if cmp(x, y) != Ordering::Greater && cmp(y, z) != Ordering::Greater {
                prop_assert_ne!(cmp(x, z), Ordering::Greater, "{:?} <= {:?} <= {:?}", x, y, z);
            }
        }
    }

    /// Terms with their values parsed once order exactly as `order_terms` orders them.
    #[test]
    fn ordered_terms_order_as_order_terms(a in term(), b in term()) {
        let (x, y) = (a.as_ref().map(OrderedTerm::new), b.as_ref().map(OrderedTerm::new));
        prop_assert_eq!(x.cmp(&y), cmp(&a, &b), "{:?} vs {:?}", a, b);
    }

    #[test]
    fn sorting_a_mix_yields_an_ordered_sequence(mut terms in prop::collection::vec(term(), 0..60)) {
        terms.sort_by(cmp);
        for pair in terms.windows(2) {
            prop_assert_ne!(cmp(&pair[0], &pair[1]), Ordering::Greater);
        }
    }
}
