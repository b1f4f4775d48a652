import java.nio.file.*;
import java.util.*;
import org.apache.jena.query.*;
import org.apache.jena.sys.JenaSystem;
import org.apache.jena.rdf.model.*;
import org.apache.jena.sparql.core.assembler.AssemblerUtils;

/**
 * Times SPARQL queries on the text dataset of an assembler file in one JVM, the way `quiver
 * bench text` times them: from the query's text to its last row, one warm-up, then the median
 * of N runs. Prints one JSON list: per query file, the median milliseconds and the rows.
 */
public class TextBench {
    public static void main(String[] args) throws Exception {
        JenaSystem.init();
        Model spec = org.apache.jena.riot.RDFDataMgr.loadModel(args[0]);
        Resource root = spec.createResource("http://localhost/jena_example/#text_dataset");
        Dataset ds = DatasetFactory.assemble(root);
        int runs = Integer.parseInt(args[1]);
        StringBuilder out = new StringBuilder("[");
        for (int i = 2; i < args.length; i++) {
            String q = Files.readString(Path.of(args[i]));
            double[] times = new double[runs];
            int rows = 0;
            for (int r = -1; r < runs; r++) {
                long start = System.nanoTime();
                ds.begin(ReadWrite.READ);
                try (QueryExecution qe = QueryExecutionFactory.create(q, ds)) {
                    ResultSet rs = qe.execSelect();
                    rows = 0;
                    while (rs.hasNext()) { rs.next(); rows++; }
                } finally { ds.end(); }
                if (r >= 0) times[r] = (System.nanoTime() - start) / 1e6;
            }
            Arrays.sort(times);
            out.append(i > 2 ? "," : "").append(String.format("{\"query\":\"%s\",\"ms\":%.3f,\"rows\":%d}", args[i], times[runs / 2], rows));
            System.err.printf("%s: %.3f ms, %d rows%n", args[i], times[runs / 2], rows);
        }
        System.out.println(out.append("]"));
    }
}
