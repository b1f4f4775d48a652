//! Loading LUBM straight from the generator: no text, no parser.

use quiver_lubm::ntriples::{write_entity_iri, write_literal_value};
use quiver_lubm::{generate_university, Class, LubmConfig, Object, Property, Triple, TripleSink};
use quiver_model::term::{TAG_IRI, TAG_SIMPLE};
use quiver_ordered::for_each_ordered;

use crate::chunk::Chunk;
use crate::Progress;

/// Encodes generated triples into a chunk.
struct ChunkSink<'a> {
    chunk: Chunk,
    properties: &'a [Vec<u8>],
    classes: &'a [Vec<u8>],
    subject: Vec<u8>,
    object: Vec<u8>,
}

impl TripleSink for ChunkSink<'_> {
    fn triple(&mut self, triple: Triple) {
        self.subject.clear();
        self.subject.push(TAG_IRI);
        write_entity_iri(&mut self.subject, &triple.subject);
        let object: &[u8] = match &triple.object {
            Object::Class(class) => &self.classes[*class as usize],
            Object::Entity(entity) => {
                self.object.clear();
                self.object.push(TAG_IRI);
                write_entity_iri(&mut self.object, entity);
                &self.object
            }
            literal => {
                self.object.clear();
                self.object.push(TAG_SIMPLE);
                write_literal_value(&mut self.object, literal);
                &self.object
            }
        };
        let predicate = &self.properties[triple.predicate as usize];
        self.chunk.add_encoded(&self.subject, predicate, object);
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
            let mut sink = ChunkSink {
                chunk: Chunk::new(),
                properties: &properties,
                classes: &classes,
                subject: Vec::new(),
                object: Vec::new(),
            };
            generate_university(config.seed, university, &mut sink);
            sink.chunk.seal();
            sink.chunk
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
