//! Loading LUBM straight from the generator: no text, no parser.

use hashbrown::HashMap;
use quiver_lubm::ntriples::{write_entity_iri, write_literal_value};
use quiver_lubm::{
    generate_university, Class, Entity, LubmConfig, Object, Property, Triple, TripleSink,
};
use quiver_model::term::{TAG_IRI, TAG_SIMPLE};
use quiver_ordered::for_each_ordered;

use crate::chunk::{Chunk, DEFAULT_GRAPH};
use crate::Progress;

/// Local ids by generator value. The keys are the generator's own values, never a client's,
/// so a fixed hash is safe.
type ValueIds = HashMap<Object, u32, foldhash::fast::FixedState>;

/// Encodes generated triples into a chunk.
///
/// Text is the generator's cost, not its draws: formatting an IRI, hashing it and comparing
/// it in the chunk's table took most of a generated load's first phase. A LUBM term is
/// a few small integers ([`Object`]), so the sink remembers each one's local id under that
/// value and formats a term only the first time the university uses it, adding it to the
/// chunk without hashing its text (sealing folds the rare term two values spell alike); the
/// predicates and classes are interned once, and a subject repeated from the previous
/// triple (the generator writes a resource's triples together) is not even looked up. The
/// chunk's terms and statements are the same as when every term was formatted.
struct ChunkSink<'a> {
    /// Entities and literals met so far, by their generator value.
    ids: ValueIds,
    chunk: Chunk,
    properties: &'a [Vec<u8>],
    classes: &'a [Vec<u8>],
    property_ids: Vec<Option<u32>>,
    class_ids: Vec<Option<u32>>,
    last_subject: Option<(Entity, u32)>,
    text: Vec<u8>,
}

impl<'a> ChunkSink<'a> {
    fn new(properties: &'a [Vec<u8>], classes: &'a [Vec<u8>]) -> Self {
        Self {
            ids: ValueIds::default(),
            chunk: Chunk::new(),
            properties,
            classes,
            property_ids: vec![None; properties.len()],
            class_ids: vec![None; classes.len()],
            last_subject: None,
            text: Vec::new(),
        }
    }

    /// The local id of an entity or literal, formatting it into the chunk on first use.
    fn value_id(&mut self, value: Object) -> u32 {
        let (chunk, text) = (&mut self.chunk, &mut self.text);
        *self.ids.entry(value).or_insert_with(|| {
            text.clear();
            match &value {
                Object::Entity(entity) => {
                    text.push(TAG_IRI);
                    write_entity_iri(text, entity);
                }
                literal => {
                    text.push(TAG_SIMPLE);
                    write_literal_value(text, literal);
                }
            }
            chunk.add_new(text)
        })
    }
}

/// The id cached in `slot`, interning `term` when there is none yet.
fn cached(slot: &mut Option<u32>, chunk: &mut Chunk, term: &[u8]) -> u32 {
    *slot.get_or_insert_with(|| chunk.intern(term))
}

impl TripleSink for ChunkSink<'_> {
    fn triple(&mut self, triple: Triple) {
        let subject = match self.last_subject {
            Some((entity, id)) if entity == triple.subject => id,
            _ => {
                let id = self.value_id(Object::Entity(triple.subject));
                self.last_subject = Some((triple.subject, id));
                id
            }
        };
        let predicate = triple.predicate as usize;
        let predicate = cached(
            &mut self.property_ids[predicate],
            &mut self.chunk,
            &self.properties[predicate],
        );
        let object = match triple.object {
            Object::Class(class) => cached(
                &mut self.class_ids[class as usize],
                &mut self.chunk,
                &self.classes[class as usize],
            ),
            value => self.value_id(value),
        };
        self.chunk
            .quads
            .push([subject, predicate, object, DEFAULT_GRAPH]);
    }
}

fn encoded_iri(iri: &str) -> Vec<u8> {
    let mut bytes = vec![TAG_IRI];
    bytes.extend_from_slice(iri.as_bytes());
    bytes
}

/// Generates the universities of `config` on `threads` threads, one chunk each.
pub(crate) fn generate_chunks(
    config: LubmConfig,
    threads: usize,
    progress: &dyn Progress,
) -> Vec<Chunk> {
    let properties: Vec<Vec<u8>> = Property::ALL
        .iter()
        .map(|p| encoded_iri(&p.iri()))
        .collect();
    let classes: Vec<Vec<u8>> = Class::ALL.iter().map(|c| encoded_iri(&c.iri())).collect();
    let mut chunks = Vec::with_capacity(config.universities as usize);
    let _ = for_each_ordered(
        config.range(),
        threads,
        |university| {
            let mut sink = ChunkSink::new(&properties, &classes);
            generate_university(config.seed, university, &mut sink);
            let mut chunk = sink.chunk;
            chunk.seal();
            chunk
        },
        |_, chunk| {
            progress.statements(chunk.quads.len() as u64);
            progress.bytes(1);
            chunks.push(chunk);
            Ok::<_, ()>(())
        },
    );
    chunks
}
