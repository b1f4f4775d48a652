//! UBA 1.7's university generator, draw for draw (see `shared/lubm/UBA-SPEC.md`).
//!
//! One call generates one university: it re-seeds Java's generator from (seed, index),
//! so universities are independent and can be generated in any order or in parallel.

use crate::rng::{university_seed, JavaRandom};
use crate::triple::{Dept, Entity, Object, Triple, TripleSink};
use crate::vocab::{Class, Property};

/// How many universities a degree can come from (`nextInt(1000)` in UBA).
const DEGREE_UNIVERSITIES: usize = 1000;
/// Each department offers courses numbered 0..100 in each of its two course pools.
const COURSE_POOL: u32 = 100;

/// Generate university `index` of a run with `seed`, feeding every triple to `sink`.
///
/// Triples that UBA writes more than once within a university (`rdf:type ub:University`
/// of degree-granting universities) are emitted only the first time.
pub fn generate_university(seed: i64, index: u32, sink: &mut impl TripleSink) {
    let mut generator = UniversityGenerator {
        rng: JavaRandom::new(university_seed(seed, index)),
        university: index,
        sink,
        typed_universities: vec![0u64; DEGREE_UNIVERSITIES.div_ceil(64)],
        own_type_written: false,
        dept: Department::default(),
        pool: Vec::new(),
        picked: Vec::new(),
    };
    let departments = generator.rng.range(15, 25);
    for department in 0..departments {
        generator.department(department);
    }
}

/// Per-department state that UBA resets for every department.
#[derive(Default)]
struct Department {
    full_professors: u32,
    associate_professors: u32,
    assistant_professors: u32,
    lecturers: u32,
    undergraduates: u32,
    graduates: u32,
    teaching_assistants: u32,
    research_assistants: u32,
    research_groups: u32,
    /// Undergraduate / graduate courses in the order faculty took them from the pools.
    undergraduate_courses: Vec<u32>,
    graduate_courses: Vec<u32>,
    publications: Vec<Publication>,
    /// Graduate-student co-authors, one list per publication (kept to reuse allocations).
    coauthors: Vec<Vec<u32>>,
}

struct Publication {
    author_class: Class,
    author: u32,
    index: u32,
}

struct UniversityGenerator<'s, S: TripleSink> {
    rng: JavaRandom,
    university: u32,
    sink: &'s mut S,
    /// Bitset of degree universities whose `rdf:type` triple was already written.
    typed_universities: Vec<u64>,
    own_type_written: bool,
    dept: Department,
    pool: Vec<u32>,
    picked: Vec<u32>,
}

impl<S: TripleSink> UniversityGenerator<'_, S> {
    fn emit(&mut self, subject: Entity, predicate: Property, object: Object) {
        self.sink.triple(Triple {
            subject,
            predicate,
            object,
        });
    }

    /// `<university> rdf:type ub:University`, at most once per generated university.
    fn university_type(&mut self, university: u32) {
        let first_time = if (university as usize) < DEGREE_UNIVERSITIES {
            let (word, bit) = (university as usize / 64, 1u64 << (university % 64));
            let fresh = self.typed_universities[word] & bit == 0;
            self.typed_universities[word] |= bit;
            fresh
        } else {
            debug_assert_eq!(university, self.university);
            !std::mem::replace(&mut self.own_type_written, true)
        };
        if first_time {
            self.emit(
                Entity::University(university),
                Property::Type,
                Object::Class(Class::University),
            );
        }
    }

    fn department(&mut self, department: u32) {
        let dept = Dept {
            university: self.university,
            department,
        };
        let rng = &mut self.rng;
        let d = &mut self.dept;
        d.full_professors = rng.range(7, 10);
        d.associate_professors = rng.range(10, 14);
        d.assistant_professors = rng.range(8, 11);
        d.lecturers = rng.range(5, 7);
        let faculty =
            d.full_professors + d.associate_professors + d.assistant_professors + d.lecturers;
        d.undergraduates = rng.range(8 * faculty, 14 * faculty);
        d.graduates = rng.range(3 * faculty, 4 * faculty);
        d.teaching_assistants = rng.range(d.graduates / 5, d.graduates / 4);
        d.research_assistants = rng.range(d.graduates / 4, d.graduates / 3);
        d.research_groups = rng.range(10, 20);
        d.undergraduate_courses.clear();
        d.graduate_courses.clear();
        d.publications.clear();
        let chair = rng.next_int(d.full_professors as i32) as u32;

        let university = Entity::University(self.university);
        let me = Entity::Department(dept);
        if department == 0 {
            self.university_type(self.university);
            self.emit(
                university,
                Property::Name,
                Object::Name(Class::University, self.university),
            );
        }
        self.emit(me, Property::Type, Object::Class(Class::Department));
        self.emit(
            me,
            Property::Name,
            Object::Name(Class::Department, department),
        );
        self.emit(me, Property::SubOrganizationOf, Object::Entity(university));
        self.university_type(self.university);

        for (class, count) in [
            (Class::FullProfessor, self.dept.full_professors),
            (Class::AssociateProfessor, self.dept.associate_professors),
            (Class::AssistantProfessor, self.dept.assistant_professors),
            (Class::Lecturer, self.dept.lecturers),
        ] {
            for j in 0..count {
                self.faculty(dept, class, j, j == chair);
            }
        }
        for j in 0..self.dept.undergraduates {
            self.undergraduate(dept, j);
        }
        for j in 0..self.dept.graduates {
            self.graduate(dept, j);
        }
        for j in 0..self.dept.research_groups {
            let group = Entity::Member(dept, Class::ResearchGroup, j);
            self.emit(group, Property::Type, Object::Class(Class::ResearchGroup));
            self.emit(group, Property::SubOrganizationOf, Object::Entity(me));
        }
        self.publications(dept);
        self.courses(dept);
        self.assistants(dept);
    }

    fn faculty(&mut self, dept: Dept, class: Class, j: u32, is_chair: bool) {
        let me = Entity::Member(dept, class, j);
        self.emit(me, Property::Type, Object::Class(class));
        self.emit(me, Property::Name, Object::Name(class, j));
        for graduate_level in [false, true] {
            let courses = self.rng.range(1, 2);
            for _ in 0..courses {
                let assigned = if graduate_level {
                    &mut self.dept.graduate_courses
                } else {
                    &mut self.dept.undergraduate_courses
                };
                // UBA draws a position in the pool, ignores it and takes the first remaining
                // course; the pool is ascending, so that is the count taken so far.
                let remaining = COURSE_POOL - assigned.len() as u32;
                self.rng.range(0, remaining - 1);
                let course = assigned.len() as u32;
                assigned.push(course);
                let course_class = if graduate_level {
                    Class::GraduateCourse
                } else {
                    Class::Course
                };
                let course = Entity::Member(dept, course_class, course);
                self.emit(me, Property::TeacherOf, Object::Entity(course));
            }
        }
        for degree in [
            Property::UndergraduateDegreeFrom,
            Property::MastersDegreeFrom,
            Property::DoctoralDegreeFrom,
        ] {
            self.degree(me, degree);
        }
        self.emit(
            me,
            Property::WorksFor,
            Object::Entity(Entity::Department(dept)),
        );
        self.emit(me, Property::EmailAddress, Object::Email(dept, class, j));
        self.emit(me, Property::Telephone, Object::Telephone);
        if class != Class::Lecturer {
            let research = self.rng.next_int(30) as u32;
            self.emit(me, Property::ResearchInterest, Object::Research(research));
        }
        if class == Class::FullProfessor && is_chair {
            self.emit(
                me,
                Property::HeadOf,
                Object::Entity(Entity::Department(dept)),
            );
        }
        let (min, max) = match class {
            Class::FullProfessor => (15, 20),
            Class::AssociateProfessor => (10, 18),
            Class::AssistantProfessor => (5, 10),
            _ => (0, 5),
        };
        let publications = self.rng.range(min, max);
        for index in 0..publications {
            self.dept.publications.push(Publication {
                author_class: class,
                author: j,
                index,
            });
        }
    }

    /// A degree: the value is a typed node in UBA, so it also types the university.
    fn degree(&mut self, me: Entity, degree: Property) {
        let university = self.rng.next_int(DEGREE_UNIVERSITIES as i32) as u32;
        self.emit(me, degree, Object::Entity(Entity::University(university)));
        self.university_type(university);
    }

    fn student_header(&mut self, dept: Dept, class: Class, j: u32) -> Entity {
        let me = Entity::Member(dept, class, j);
        self.emit(me, Property::Type, Object::Class(class));
        self.emit(me, Property::Name, Object::Name(class, j));
        self.emit(
            me,
            Property::MemberOf,
            Object::Entity(Entity::Department(dept)),
        );
        self.emit(me, Property::EmailAddress, Object::Email(dept, class, j));
        self.emit(me, Property::Telephone, Object::Telephone);
        me
    }

    /// `takesCourse` for `count` distinct courses of the assigned list.
    fn takes_courses(&mut self, dept: Dept, me: Entity, count: u32, graduate_level: bool) {
        let offered = if graduate_level {
            self.dept.graduate_courses.len()
        } else {
            self.dept.undergraduate_courses.len()
        } as u32;
        self.rng
            .pick(count, 0, offered - 1, &mut self.pool, &mut self.picked);
        for i in 0..self.picked.len() {
            let position = self.picked[i] as usize;
            let (class, course) = if graduate_level {
                (Class::GraduateCourse, self.dept.graduate_courses[position])
            } else {
                (Class::Course, self.dept.undergraduate_courses[position])
            };
            let course = Entity::Member(dept, class, course);
            self.emit(me, Property::TakesCourse, Object::Entity(course));
        }
    }

    fn advisor(&mut self, dept: Dept, me: Entity) {
        let (class, count) = match self.rng.range(4, 6) {
            4 => (Class::FullProfessor, self.dept.full_professors),
            5 => (Class::AssociateProfessor, self.dept.associate_professors),
            _ => (Class::AssistantProfessor, self.dept.assistant_professors),
        };
        let advisor = self.rng.next_int(count as i32) as u32;
        let advisor = Entity::Member(dept, class, advisor);
        self.emit(me, Property::Advisor, Object::Entity(advisor));
    }

    fn undergraduate(&mut self, dept: Dept, j: u32) {
        let me = self.student_header(dept, Class::UndergraduateStudent, j);
        let courses = self.rng.range(2, 4);
        self.takes_courses(dept, me, courses, false);
        if self.rng.next_int(5) == 0 {
            self.advisor(dept, me);
        }
    }

    fn graduate(&mut self, dept: Dept, j: u32) {
        let me = self.student_header(dept, Class::GraduateStudent, j);
        let courses = self.rng.range(1, 3);
        self.takes_courses(dept, me, courses, true);
        self.degree(me, Property::UndergraduateDegreeFrom);
        self.rng.next_int(1);
        self.advisor(dept, me);
        let count = self.rng.range(0, 5);
        let publications = self.dept.publications.len() as u32;
        self.rng
            .pick(count, 0, publications - 1, &mut self.pool, &mut self.picked);
        let coauthors = &mut self.dept.coauthors;
        if coauthors.len() < publications as usize {
            coauthors.resize_with(publications as usize, Vec::new);
        }
        for &position in &self.picked {
            coauthors[position as usize].push(j);
        }
    }

    fn publications(&mut self, dept: Dept) {
        for p in 0..self.dept.publications.len() {
            let Publication {
                author_class,
                author,
                index,
            } = self.dept.publications[p];
            let me = Entity::Publication {
                dept,
                author_class,
                author,
                index,
            };
            self.emit(me, Property::Type, Object::Class(Class::Publication));
            self.emit(me, Property::Name, Object::Name(Class::Publication, index));
            let first = Entity::Member(dept, author_class, author);
            self.emit(me, Property::PublicationAuthor, Object::Entity(first));
            let coauthors = std::mem::take(&mut self.dept.coauthors[p]);
            for &student in &coauthors {
                let student = Entity::Member(dept, Class::GraduateStudent, student);
                self.emit(me, Property::PublicationAuthor, Object::Entity(student));
            }
            self.dept.coauthors[p] = coauthors;
            self.dept.coauthors[p].clear();
        }
    }

    fn courses(&mut self, dept: Dept) {
        for (class, graduate_level) in [(Class::Course, false), (Class::GraduateCourse, true)] {
            let count = if graduate_level {
                self.dept.graduate_courses.len()
            } else {
                self.dept.undergraduate_courses.len()
            };
            for i in 0..count {
                let course = if graduate_level {
                    self.dept.graduate_courses[i]
                } else {
                    self.dept.undergraduate_courses[i]
                };
                let me = Entity::Member(dept, class, course);
                self.emit(me, Property::Type, Object::Class(class));
                self.emit(me, Property::Name, Object::Name(class, course));
            }
        }
    }

    fn assistants(&mut self, dept: Dept) {
        let teaching = self.dept.teaching_assistants;
        let research = self.dept.research_assistants;
        let mut students = Vec::new();
        self.rng.pick(
            teaching + research,
            0,
            self.dept.graduates - 1,
            &mut self.pool,
            &mut students,
        );
        let offered = self.dept.undergraduate_courses.len() as u32;
        self.rng
            .pick(teaching, 0, offered - 1, &mut self.pool, &mut self.picked);
        for (i, &student) in students.iter().enumerate() {
            let me = Entity::Member(dept, Class::GraduateStudent, student);
            if i < teaching as usize {
                self.emit(me, Property::Type, Object::Class(Class::TeachingAssistant));
                let course = self.dept.undergraduate_courses[self.picked[i] as usize];
                let course = Entity::Member(dept, Class::Course, course);
                self.emit(me, Property::TeachingAssistantOf, Object::Entity(course));
            } else {
                self.emit(me, Property::Type, Object::Class(Class::ResearchAssistant));
            }
        }
    }
}
