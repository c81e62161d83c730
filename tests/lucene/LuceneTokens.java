// Lucene's token streams, one output line per input line (tokens separated by
// one space), for tests/test_analyzer_lucene.py and bench/lucene_tokens.py.
// Run with Java 11+ as a single source file, Lucene 9 on the class path:
//   java -cp lucene-core.jar:lucene-analysis-common.jar LuceneTokens.java english < text
// "english": EnglishAnalyzer (StandardTokenizer, possessive filter, lower case,
// Porter stemmer); "cjk": CJKAnalyzer (StandardTokenizer, width folding, lower
// case, CJK bigrams). Both without stop words: the check's lists are its own.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.cjk.CJKAnalyzer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;

public class LuceneTokens {
  public static void main(String[] args) throws Exception {
    Analyzer analyzer = args[0].equals("cjk")
        ? new CJKAnalyzer(CharArraySet.EMPTY_SET)
        : new EnglishAnalyzer(CharArraySet.EMPTY_SET);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      StringBuilder tokens = new StringBuilder();
      try (TokenStream stream = analyzer.tokenStream("text", line)) {
        CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
        stream.reset();
        while (stream.incrementToken()) {
          if (tokens.length() > 0) tokens.append(' ');
          tokens.append(term);
        }
        stream.end();
      }
      out.println(tokens);
    }
    out.flush();
  }
}
