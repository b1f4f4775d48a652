// The 14 original LUBM queries over Apache Jena's OWL rule reasoner, as
// bench/peers/jena-reasoner.sh runs them beside Quiver: the data and the ontology are
// loaded into an in-memory model, the reasoner's inference model is prepared and copied
// whole into a plain model (materialisation: every entailed triple computed), and each
// query runs on that copy, timed as the median of RUNS runs after 3 warm-ups with every
// row read. Prints one JSON object.
//
// Usage: java LubmReasoner REASONER(micro|mini|rdfs) QUERY_DIR RUNS FILE...

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.apache.jena.query.Query;
import org.apache.jena.query.QueryExecution;
import org.apache.jena.query.QueryExecutionFactory;
import org.apache.jena.query.QueryFactory;
import org.apache.jena.query.ResultSet;
import org.apache.jena.rdf.model.InfModel;
import org.apache.jena.rdf.model.Model;
import org.apache.jena.rdf.model.ModelFactory;
import org.apache.jena.reasoner.Reasoner;
import org.apache.jena.reasoner.ReasonerRegistry;
import org.apache.jena.riot.RDFDataMgr;

public class LubmReasoner {
    public static void main(String[] args) throws Exception {
        String kind = args[0];
        Path queries = Path.of(args[1]);
        int runs = Integer.parseInt(args[2]);
        long started = System.nanoTime();
        Model base = ModelFactory.createDefaultModel();
        for (int i = 3; i < args.length; i++) {
            RDFDataMgr.read(base, args[i]);
        }
        double loadSeconds = (System.nanoTime() - started) / 1e9;
        Reasoner reasoner = switch (kind) {
            case "micro" -> ReasonerRegistry.getOWLMicroReasoner();
            case "mini" -> ReasonerRegistry.getOWLMiniReasoner();
            case "rdfs" -> ReasonerRegistry.getRDFSReasoner();
            default -> throw new IllegalArgumentException("reasoner " + kind);
        };
        started = System.nanoTime();
        InfModel inf = ModelFactory.createInfModel(reasoner, base);
        inf.prepare();
        Model closure = ModelFactory.createDefaultModel();
        closure.add(inf);
        double materialiseSeconds = (System.nanoTime() - started) / 1e9;
        StringBuilder out = new StringBuilder();
        out.append("{\"reasoner\": \"").append(kind).append("\", \"asserted_triples\": ").append(base.size())
            .append(", \"entailed_triples\": ").append(closure.size())
            .append(", \"load_seconds\": ").append(loadSeconds)
            .append(", \"materialise_seconds\": ").append(materialiseSeconds)
            .append(", \"queries\": {");
        for (int n = 1; n <= 14; n++) {
            Query query = QueryFactory.create(Files.readString(queries.resolve("q" + n + ".rq")));
            long rows = 0;
            List<Double> times = new ArrayList<>();
            for (int r = 0; r < runs + 3; r++) {
                long t = System.nanoTime();
                rows = 0;
                try (QueryExecution exec = QueryExecutionFactory.create(query, closure)) {
                    ResultSet results = exec.execSelect();
                    while (results.hasNext()) {
                        results.next();
                        rows++;
                    }
                }
                if (r >= 3) {
                    times.add((System.nanoTime() - t) / 1e6);
                }
            }
            Collections.sort(times);
            out.append(n > 1 ? ", " : "").append("\"q").append(n).append("\": {\"rows\": ").append(rows)
                .append(", \"median_ms\": ").append(times.get(times.size() / 2)).append("}");
        }
        out.append("}}");
        System.out.println(out);
    }
}
