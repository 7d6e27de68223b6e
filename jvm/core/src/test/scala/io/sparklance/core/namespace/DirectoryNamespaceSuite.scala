package io.sparklance.core.namespace

import java.nio.file.Files

import scala.util.Random

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.core.namespace.ManifestTable.Entry
import io.sparklance.core.table.Table
import io.sparklance.core.testing.Races

/**
 * The directory namespace on a local directory: the `__manifest` rows of namespaces and tables, locations as
 * lance-namespace names them, directory listing, and changes that race (tests/test_namespaces.py checks the same
 * layout against pylance's own implementation).
 */
class DirectoryNamespaceSuite extends AnyFunSuite {
  private val conf = new Configuration()

  private def newRoot(): String = Files.createTempDirectory("dirns").toString + "/root"

  private def connect(root: String, props: (String, String)*): LanceNamespace =
    LanceNamespace.connect(Map("impl" -> "dir", "root" -> root) ++ props, conf)

  private def manifestRows(root: String): Seq[(String, String, Option[String])] =
    new ManifestTable(Table.forPath(s"$root/__manifest", conf)).entries().map(e => (e.objectId, e.objectType, e.location))
      .sortBy(_._1)

  test("namespaces and tables are rows of __manifest; root tables are <name>.lance, others <hash>_<object id>") {
    val root = newRoot()
    val ns = connect(root)
    ns.createNamespace(Seq("a"), Map("k" -> "v"))
    ns.createNamespace(Seq("a", "b"), Map.empty)
    val inner = ns.declareTable(Seq("a", "b", "t"))
    val top = ns.declareTable(Seq("top"))
    assert(top == s"$root/top.lance")
    assert(inner.matches(s"\\Q$root/\\E[0-9a-f]{8}_a\\$$b\\$$t"), inner)
    assert(manifestRows(root) == Seq(("a", "namespace", None), ("a$b", "namespace", None),
      ("a$b$t", "table", Some(inner.stripPrefix(root + "/"))), ("top", "table", Some("top.lance"))))
    assert(ns.listNamespaces(Nil) == Seq("a") && ns.listNamespaces(Seq("a")) == Seq("b"))
    assert(ns.listTables(Seq("a", "b")) == Seq("t") && ns.listTables(Nil) == Seq("top"))
    assert(ns.namespaceProperties(Seq("a")) == Map("k" -> "v"))
    assert(ns.tableLocation(Seq("a", "b", "t")).contains(inner))
    assert(intercept[NamespaceNotEmptyException](ns.dropNamespace(Seq("a"))).getMessage.contains("a$b, a$b$t"))
    assert(intercept[TableInNamespaceExistsException](ns.declareTable(Seq("a", "b", "t"))).id == Seq("a", "b", "t"))
    assert(intercept[NamespaceNotFoundException](ns.declareTable(Seq("x", "t"))).id == Seq("x"))
    assert(ns.dropTable(Seq("a", "b", "t")) && !ns.dropTable(Seq("a", "b", "t")))
    ns.dropNamespace(Seq("a", "b"))
    ns.dropNamespace(Seq("a"))
    assert(manifestRows(root) == Seq(("top", "table", Some("top.lance"))))
  }

  test("deregister keeps the directory; register takes locations under the root, relative or not, once each") {
    val root = newRoot()
    val ns = connect(root)
    ns.createNamespace(Seq("a"), Map.empty)
    val dir = ns.declareTable(Seq("a", "t"))
    Files.createDirectories(java.nio.file.Paths.get(s"$dir/_versions"))
    assert(ns.deregisterTable(Seq("a", "t")).contains(dir))
    assert(ns.deregisterTable(Seq("a", "t")).isEmpty && ns.listTables(Seq("a")).isEmpty)
    assert(Files.isDirectory(java.nio.file.Paths.get(s"$dir/_versions")))
    val name = dir.stripPrefix(root + "/")
    // Absolute (in either spelling of a local URI) or relative: one row, relative to the root.
    Seq(name, dir, s"file://$dir", s"file:$dir/").foreach { spelling =>
      assert(ns.registerTable(Seq("a", "again"), spelling) == dir, spelling)
      assert(manifestRows(root).contains(("a$again", "table", Some(name))), spelling)
      assert(ns.deregisterTable(Seq("a", "again")).contains(dir))
    }
    ns.registerTable(Seq("a", "again"), name)
    assert(intercept[InvalidArgumentException](ns.registerTable(Seq("a", "twice"), dir)).getMessage
      .contains("location of table a.again"))
    Seq("/elsewhere/t.lance", s"$root/../x", "", "__manifest", "a/./b").foreach { bad =>
      intercept[InvalidArgumentException](ns.registerTable(Seq("a", "bad"), bad))
    }
    assert(intercept[TableInNamespaceExistsException](ns.registerTable(Seq("a", "again"), "other")).id == Seq("a", "again"))
    assert(ns.listTables(Seq("a")) == Seq("again"))
    // A root table that directory listing finds cannot leave the namespace and keep its files.
    val top = ns.declareTable(Seq("top"))
    Files.createDirectories(java.nio.file.Paths.get(s"$top/_versions"))
    assert(intercept[UnsupportedFeatureException](ns.deregisterTable(Seq("top"))).getMessage.contains("PURGE"))
    assert(ns.listTables(Nil) == Seq("top"))
  }

  test("directory listing: unlisted <name>.lance directories are root tables; off, root tables are hashed") {
    val root = newRoot()
    Files.createDirectories(java.nio.file.Paths.get(s"$root/old.lance/_versions"))
    val listing = connect(root)
    assert(listing.listTables(Nil) == Seq("old"))
    assert(listing.tableLocation(Seq("old")).contains(s"$root/old.lance"))
    assert(intercept[TableInNamespaceExistsException](listing.declareTable(Seq("old"))).id == Seq("old"))
    val noListing = connect(root, "dir_listing_enabled" -> "false")
    assert(noListing.listTables(Nil) == Nil && noListing.tableLocation(Seq("old")).isEmpty)
    assert(noListing.declareTable(Seq("old")).matches(s"\\Q$root/\\E[0-9a-f]{8}_old"))
  }

  test("manifest off: flat tables only, child namespaces refused") {
    val root = newRoot()
    val ns = connect(root, "manifest_enabled" -> "false")
    assert(ns.declareTable(Seq("t")) == s"$root/t.lance")
    assert(intercept[UnsupportedFeatureException](ns.createNamespace(Seq("a"), Map.empty)).getMessage
      .contains("manifest_enabled = false"))
    assert(!new java.io.File(s"$root/__manifest").exists())
  }

  test("bad names, unknown properties and malformed values are refused by name") {
    val root = newRoot()
    val ns = connect(root)
    Seq("a$b", "", "..", "a/b").foreach { bad =>
      val e = intercept[InvalidArgumentException](ns.createNamespace(Seq(bad), Map.empty))
      assert(e.getMessage.contains(s"'$bad' is not a valid namespace name"), e.getMessage)
    }
    assert(intercept[InvalidArgumentException](connect(root, "manifest" -> "true")).getMessage
      .contains("Unknown directory namespace property 'manifest'"))
    assert(intercept[InvalidArgumentException](connect(root, "dir_listing_enabled" -> "yes")).getMessage
      .contains("dir_listing_enabled must be true or false, not 'yes'"))
    assert(intercept[UnsupportedFeatureException](LanceNamespace.connect(Map("impl" -> "hive"), conf)).getMessage
      .contains("impl 'hive'"))
  }

  test("a change whose rows another writer replaced meanwhile is made again from the new rows, not rebased") {
    val root = newRoot()
    val table = new ManifestTable(Table.forPath(s"$root/__manifest", conf))
    table.update(3)(_ :+ Entry("first", "namespace", None, None, None))
    var attempts = 0
    table.update(3) { rows =>
      attempts += 1
      // On the first attempt another writer commits between this read and this commit.
      if (attempts == 1) new ManifestTable(Table.forPath(s"$root/__manifest", conf))
        .update(1)(_ :+ Entry("other", "namespace", None, None, None))
      rows :+ Entry("mine", "namespace", None, None, None)
    }
    assert(attempts == 2)
    assert(table.entries().map(_.objectId).sorted == Seq("first", "mine", "other"))
  }

  test("racing creates of distinct tables all end up listed; of one name, exactly one wins") {
    val rng = new Random(5)
    val root = newRoot()
    connect(root).createNamespace(Seq("db"), Map.empty)
    val names = rng.shuffle((0 until 8).map(i => s"t$i"))
    Races.run(names.size)(w => connect(root).declareTable(Seq("db", names(w))))
    assert(connect(root).listTables(Seq("db")) == names.sorted)
    val outcomes = Races.run(4) { _ =>
      try Right(connect(root).declareTable(Seq("db", "same")))
      catch { case e: TableInNamespaceExistsException => Left(e.id) }
    }
    assert(outcomes.count(_.isRight) == 1, outcomes)
    assert(connect(root).listTables(Seq("db")) == (names :+ "same").sorted)
  }
}
