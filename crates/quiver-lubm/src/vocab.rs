//! The univ-bench vocabulary: the 19 classes and the properties UBA writes.

/// Namespace of the univ-bench ontology.
pub const UB: &str = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
/// `rdf:type`.
pub const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/// A univ-bench class, numbered as in UBA (the order matters to its draws).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Class {
    University = 0,
    Department,
    Faculty,
    Professor,
    FullProfessor,
    AssociateProfessor,
    AssistantProfessor,
    Lecturer,
    Student,
    UndergraduateStudent,
    GraduateStudent,
    TeachingAssistant,
    ResearchAssistant,
    Course,
    GraduateCourse,
    Publication,
    Chair,
    Research,
    ResearchGroup,
}

impl Class {
    /// Every class, in UBA's order.
    pub const ALL: [Class; 19] = [
        Class::University,
        Class::Department,
        Class::Faculty,
        Class::Professor,
        Class::FullProfessor,
        Class::AssociateProfessor,
        Class::AssistantProfessor,
        Class::Lecturer,
        Class::Student,
        Class::UndergraduateStudent,
        Class::GraduateStudent,
        Class::TeachingAssistant,
        Class::ResearchAssistant,
        Class::Course,
        Class::GraduateCourse,
        Class::Publication,
        Class::Chair,
        Class::Research,
        Class::ResearchGroup,
    ];

    /// The local name, used in IRIs (`…/FullProfessor7`) and name literals.
    pub const fn name(self) -> &'static str {
        match self {
            Class::University => "University",
            Class::Department => "Department",
            Class::Faculty => "Faculty",
            Class::Professor => "Professor",
            Class::FullProfessor => "FullProfessor",
            Class::AssociateProfessor => "AssociateProfessor",
            Class::AssistantProfessor => "AssistantProfessor",
            Class::Lecturer => "Lecturer",
            Class::Student => "Student",
            Class::UndergraduateStudent => "UndergraduateStudent",
            Class::GraduateStudent => "GraduateStudent",
            Class::TeachingAssistant => "TeachingAssistant",
            Class::ResearchAssistant => "ResearchAssistant",
            Class::Course => "Course",
            Class::GraduateCourse => "GraduateCourse",
            Class::Publication => "Publication",
            Class::Chair => "Chair",
            Class::Research => "Research",
            Class::ResearchGroup => "ResearchGroup",
        }
    }

    /// The full class IRI.
    pub fn iri(self) -> String {
        format!("{UB}{}", self.name())
    }
}

/// A property UBA writes (`rdf:type` included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Property {
    Type = 0,
    Name,
    TakesCourse,
    TeacherOf,
    UndergraduateDegreeFrom,
    MastersDegreeFrom,
    DoctoralDegreeFrom,
    Advisor,
    MemberOf,
    PublicationAuthor,
    HeadOf,
    TeachingAssistantOf,
    ResearchInterest,
    EmailAddress,
    Telephone,
    SubOrganizationOf,
    WorksFor,
}

impl Property {
    /// Every property, `rdf:type` first.
    pub const ALL: [Property; 17] = [
        Property::Type,
        Property::Name,
        Property::TakesCourse,
        Property::TeacherOf,
        Property::UndergraduateDegreeFrom,
        Property::MastersDegreeFrom,
        Property::DoctoralDegreeFrom,
        Property::Advisor,
        Property::MemberOf,
        Property::PublicationAuthor,
        Property::HeadOf,
        Property::TeachingAssistantOf,
        Property::ResearchInterest,
        Property::EmailAddress,
        Property::Telephone,
        Property::SubOrganizationOf,
        Property::WorksFor,
    ];

    /// The local name in the `ub:` namespace (`type` for `rdf:type`).
    pub const fn local_name(self) -> &'static str {
        match self {
            Property::Type => "type",
            Property::Name => "name",
            Property::TakesCourse => "takesCourse",
            Property::TeacherOf => "teacherOf",
            Property::UndergraduateDegreeFrom => "undergraduateDegreeFrom",
            Property::MastersDegreeFrom => "mastersDegreeFrom",
            Property::DoctoralDegreeFrom => "doctoralDegreeFrom",
            Property::Advisor => "advisor",
            Property::MemberOf => "memberOf",
            Property::PublicationAuthor => "publicationAuthor",
            Property::HeadOf => "headOf",
            Property::TeachingAssistantOf => "teachingAssistantOf",
            Property::ResearchInterest => "researchInterest",
            Property::EmailAddress => "emailAddress",
            Property::Telephone => "telephone",
            Property::SubOrganizationOf => "subOrganizationOf",
            Property::WorksFor => "worksFor",
        }
    }

    /// The full property IRI.
    pub fn iri(self) -> String {
        match self {
            Property::Type => RDF_TYPE.to_owned(),
            other => format!("{UB}{}", other.local_name()),
        }
    }
}
