package io.sparklance.bench

import java.lang.management.ManagementFactory
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import org.tartarus.snowball.ext.{EnglishStemmer => LuceneEnglishStemmer}

import io.sparklance.core.index.{EnglishStemmer, FtsParams}

/**
 * The cost of stemming in full-text analysis, in CPU time of one thread: the distinct words of the `*.py` files under
 * the directory given (lower case), stemmed by sparklance's Snowball 3.1.1 English stemmer and by Lucene's Snowball
 * English stemmer (the peer, generated from an older Snowball); then texts of 100 of those words tokenized with
 * pylance's default analysis with and without stemming. Prints ns per word or token of the best of `rounds` rounds
 * after a warm-up, and the ratios. Usage: StemBench DIR (`-Drounds=5`).
 */
object StemBench {
  def main(args: Array[String]): Unit = {
    val rounds = sys.props.getOrElse("rounds", "5").toInt
    val word = "[A-Za-z\u00C0-\u024F']+".r
    val files = Files.walk(Paths.get(args(0))).iterator().asScala.filter(_.toString.endsWith(".py")).toSeq.sorted
    val words = files.iterator.flatMap { (f: Path) =>
      word.findAllIn(new String(Files.readAllBytes(f), StandardCharsets.UTF_8)).map(_.toLowerCase)
    }.filter(_.length > 1).toSet.toArray.sorted
    val texts = words.grouped(100).map(_.mkString(" ")).toArray
    val threads = ManagementFactory.getThreadMXBean

    def best(units: Long)(body: => Long): Double = {
      body; body
      (1 to rounds).map { _ =>
        val c0 = threads.getCurrentThreadCpuTime
        val n = body
        require(n >= 0)
        (threads.getCurrentThreadCpuTime - c0).toDouble / units
      }.min
    }

    val ours = best(words.length) {
      var h = 0L
      words.foreach(w => h += EnglishStemmer.stem(w).length)
      h
    }
    val lucene = new LuceneEnglishStemmer()
    val peer = best(words.length) {
      var h = 0L
      words.foreach { w => lucene.setCurrent(w); lucene.stem(); h += lucene.getCurrent.length }
      h
    }
    val stemming = FtsParams.parse("{}", "bench", "bench").tokenizer()
    val plain = FtsParams.parse("""{"stem":false}""", "bench", "bench").tokenizer()
    val tokens = texts.map(t => plain.tokenize(t).size().toLong).sum
    def analysis(t: io.sparklance.core.index.FtsTokenizer): Double = best(tokens) {
      var n = 0L
      texts.foreach(x => n += t.tokenize(x).size())
      n
    }
    val withStem = analysis(stemming)
    val without = analysis(plain)
    println(f"${words.length} distinct words, ${texts.length} texts, $tokens tokens without stemming")
    println(f"stem a word: sparklance $ours%.0f ns, Lucene's Snowball English $peer%.0f ns (ratio ${ours / peer}%.2f)")
    println(f"analyse a token: with stemming $withStem%.0f ns, without $without%.0f ns (ratio ${withStem / without}%.2f)")
  }
}
