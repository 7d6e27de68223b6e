package io.sparklance.spark

import java.io.{PrintWriter, StringWriter}
import java.nio.file.Paths
import java.util.spi.ToolProvider

import org.scalatest.funsuite.AnyFunSuite

/**
 * The shape of the code, checked on the built classes with the JDK's `jdeps` (docs/dev/architecture.md): the
 * core's packages depend on each other without cycles, and the Spark module uses only the core's API packages.
 */
class ArchitectureSuite extends AnyFunSuite {

  /** The packages the Spark module may use: errors and vocabulary, schemas, the front door, small utilities. */
  private val CoreApi = Set("io.sparklance.core", "io.sparklance.core.schema", "io.sparklance.core.table", "io.sparklance.core.index",
    "io.sparklance.core.util", "io.sparklance.core.namespace")

  private def classesOf(c: Class[_]): String = Paths.get(c.getProtectionDomain.getCodeSource.getLocation.toURI).toString

  /** (from package, to package) for every reference between sparklance packages in the classes at `dir`. */
  private def packageEdges(dir: String): Set[(String, String)] = {
    val jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() => new IllegalStateException("the JDK has no jdeps"))
    val out = new StringWriter()
    val err = new StringWriter()
    val code = jdeps.run(new PrintWriter(out), new PrintWriter(err), "-verbose:package", "-filter:none",
      "-e", "io\\.sparklance\\..*", dir)
    assert(code == 0, s"jdeps failed: $err")
    val Edge = """\s+(io\.sparklance[\w.]*)\s+->\s+(io\.sparklance[\w.]*)\s.*""".r
    out.toString.linesIterator.collect { case Edge(from, to) if from != to => (from, to) }.toSet
  }

  private lazy val core = packageEdges(classesOf(classOf[io.sparklance.core.table.Table]))
    .filterNot { case (from, to) => Seq(from, to).exists(p => p.startsWith("io.sparklance.proto") || p.startsWith("io.sparklance.cli")) }
  private lazy val spark = packageEdges(classesOf(classOf[LanceCatalog]))

  /** A cycle in `edges` as a list of packages, if there is one. */
  private def cycle(edges: Set[(String, String)]): Option[Seq[String]] = {
    val next = edges.groupMap(_._1)(_._2)
    def visit(path: List[String], seen: Set[String]): Option[Seq[String]] = {
      val here = path.head
      next.getOrElse(here, Set.empty).iterator.map { to =>
        if (path.contains(to)) Some((to :: path.takeWhile(_ != to) ::: List(to)).reverse)
        else if (seen.contains(to)) None
        else visit(to :: path, seen + to)
      }.collectFirst { case Some(c) => c }
    }
    next.keys.iterator.map(p => visit(List(p), Set(p))).collectFirst { case Some(c) => c }
  }

  test("jdeps sees the core's packages and their references") {
    assert(core.exists(_._1 == "io.sparklance.core.table"), core)
    assert(core.exists(_._2 == "io.sparklance.core.storage"), core)
  }

  test("the core's packages have no cycle") {
    assert(cycle(core).isEmpty, s"package cycle: ${cycle(core).map(_.mkString(" -> "))}")
  }

  /** The core's layers, lowest first, as docs/dev/architecture.md lists them: each may use only layers before it. */
  private val Layers = Seq("core", "util", "storage", "schema", "format", "encoding", "file", "write", "index", "commit",
    "txn", "scan", "table", "namespace").map(p => if (p == "core") "io.sparklance.core" else s"io.sparklance.core.$p")

  test("the core's packages use only the layers below them") {
    val upward = core.filter { case (from, to) =>
      Layers.contains(from) && Layers.contains(to) && Layers.indexOf(to) > Layers.indexOf(from)
    }
    assert(upward.isEmpty, s"references to a higher layer: ${upward.map { case (a, b) => s"$a -> $b" }.mkString(", ")}")
    val unknown = core.flatMap { case (a, b) => Seq(a, b) }.filterNot(Layers.contains)
    assert(unknown.isEmpty, s"packages not in the layer list (add them to it and to docs/dev/architecture.md): $unknown")
  }

  test("the cycle check finds a cycle") {
    assert(cycle(Set("a" -> "b", "b" -> "c", "c" -> "a", "c" -> "d")).map(_.toSet).contains(Set("a", "b", "c")))
    assert(cycle(Set("a" -> "b", "b" -> "c", "a" -> "c")).isEmpty)
  }

  test("the Spark module uses only the core's API packages") {
    val used = spark.collect { case (from, to) if from.startsWith("io.sparklance.spark") && !to.startsWith("io.sparklance.spark") => to }
    assert(used.contains("io.sparklance.core.table"))
    assert(used -- CoreApi == Set.empty, s"the Spark module uses core internals: ${(used -- CoreApi).toSeq.sorted}")
  }
}
