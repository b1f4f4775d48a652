//! Formats LUBM triples as N-Triples lines, straight into a byte buffer.
//!
//! Generation is cheap; text is the cost. This writer avoids `format!` and per-term
//! allocations: every term is a few fixed strings and integers appended to one `Vec<u8>`.

use crate::triple::{Dept, Entity, Object, Triple, TripleSink};
use crate::vocab::{Property, RDF_TYPE, UB};

/// A [`TripleSink`] that appends N-Triples lines to a byte buffer.
#[derive(Debug, Default)]
pub struct NTriplesBuffer {
    pub bytes: Vec<u8>,
    pub triples: u64,
}

impl NTriplesBuffer {
    pub fn new() -> Self {
        Self::default()
    }
}

impl TripleSink for NTriplesBuffer {
    fn triple(&mut self, triple: Triple) {
        write_triple(&mut self.bytes, &triple);
        self.triples += 1;
    }
}

/// Append one N-Triples line (with its trailing newline) for `triple`.
pub fn write_triple(out: &mut Vec<u8>, triple: &Triple) {
    write_entity(out, &triple.subject);
    out.push(b' ');
    write_property(out, triple.predicate);
    out.push(b' ');
    write_object(out, &triple.object);
    out.extend_from_slice(b" .\n");
}

fn write_number(out: &mut Vec<u8>, n: u32) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

fn write_dept_host(out: &mut Vec<u8>, dept: &Dept) {
    out.extend_from_slice(b"http://www.Department");
    write_number(out, dept.department);
    out.extend_from_slice(b".University");
    write_number(out, dept.university);
    out.extend_from_slice(b".edu");
}

/// Append the IRI of `entity` without angle brackets.
pub fn write_entity_iri(out: &mut Vec<u8>, entity: &Entity) {
    match entity {
        Entity::University(u) => {
            out.extend_from_slice(b"http://www.University");
            write_number(out, *u);
            out.extend_from_slice(b".edu");
        }
        Entity::Department(dept) => write_dept_host(out, dept),
        Entity::Member(dept, class, index) => {
            write_dept_host(out, dept);
            out.push(b'/');
            out.extend_from_slice(class.name().as_bytes());
            write_number(out, *index);
        }
        Entity::Publication {
            dept,
            author_class,
            author,
            index,
        } => {
            write_dept_host(out, dept);
            out.push(b'/');
            out.extend_from_slice(author_class.name().as_bytes());
            write_number(out, *author);
            out.extend_from_slice(b"/Publication");
            write_number(out, *index);
        }
    }
}

fn write_entity(out: &mut Vec<u8>, entity: &Entity) {
    out.push(b'<');
    write_entity_iri(out, entity);
    out.push(b'>');
}

fn write_property(out: &mut Vec<u8>, property: Property) {
    out.push(b'<');
    match property {
        Property::Type => out.extend_from_slice(RDF_TYPE.as_bytes()),
        other => {
            out.extend_from_slice(UB.as_bytes());
            out.extend_from_slice(other.local_name().as_bytes());
        }
    }
    out.push(b'>');
}

/// Append the lexical form of a literal object (no quotes); `false` for IRI objects.
pub fn write_literal_value(out: &mut Vec<u8>, object: &Object) -> bool {
    match object {
        Object::Entity(_) | Object::Class(_) => return false,
        Object::Name(class, index) => {
            out.extend_from_slice(class.name().as_bytes());
            write_number(out, *index);
        }
        Object::Email(dept, class, index) => {
            out.extend_from_slice(class.name().as_bytes());
            write_number(out, *index);
            out.extend_from_slice(b"@Department");
            write_number(out, dept.department);
            out.extend_from_slice(b".University");
            write_number(out, dept.university);
            out.extend_from_slice(b".edu");
        }
        Object::Telephone => out.extend_from_slice(b"xxx-xxx-xxxx"),
        Object::Research(index) => {
            out.extend_from_slice(b"Research");
            write_number(out, *index);
        }
    }
    true
}

fn write_object(out: &mut Vec<u8>, object: &Object) {
    match object {
        Object::Entity(entity) => write_entity(out, entity),
        Object::Class(class) => {
            out.push(b'<');
            out.extend_from_slice(UB.as_bytes());
            out.extend_from_slice(class.name().as_bytes());
            out.push(b'>');
        }
        literal => {
            out.push(b'"');
            write_literal_value(out, literal);
            out.push(b'"');
        }
    }
}
