package io.sparklance.spark

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ArrayNode
import org.apache.arrow.vector.types.pojo.{Field => AField}

import io.sparklance.core.schema.{ArrowSchemas, LanceField, LanceSchema, LogicalType}

/**
 * The Lance fields below a list or map column, carried in the Spark field's metadata ([[SparkSchemas.FieldTreeKey]])
 * so that writing a DataFrame read from Lance keeps the element types Spark cannot name (large lists, time units,
 * unsigned integers, fixed-size lists inside lists, ...).
 *
 * The text is a JSON array of `{"name", "type", "nullable", "children"}` objects, `type` being the Lance logical
 * type string.
 */
private[spark] object FieldTrees {
  private val json = new ObjectMapper()

  def encode(children: Seq[LanceField]): String = {
    def node(f: LanceField, into: ArrayNode): Unit = {
      val o = into.addObject()
      o.put("name", f.name).put("type", f.logicalTypeName).put("nullable", f.nullable)
      f.extensionName.foreach(o.put("extension", _))
      val cs = o.putArray("children")
      f.children.foreach(node(_, cs))
    }
    val root = json.createArrayNode()
    children.foreach(node(_, root))
    json.writeValueAsString(root)
  }

  /**
   * The Arrow field of a column of logical type `top` with the children in `text`, when the Spark type of that field
   * is the one the column has (`sameSparkType`); else None (the Spark type decides). Dictionaries become their value
   * type and json becomes string, as for top-level columns; every field the column's values may null is nullable,
   * as Spark's own schema of a new table is.
   */
  def keep(name: String, top: LogicalType, nullable: Boolean, text: String,
      sameSparkType: LanceField => Boolean): Option[AField] = scala.util.Try {
    val flat = Seq.newBuilder[LanceSchema.FlatField]
    var next = 0
    def add(name: String, t: String, nullable: Boolean, ext: Option[String], parent: Int): Int = {
      val id = next
      next += 1
      val plain = LogicalType.parse(t) match {
        case LogicalType.Dictionary(value, _, _) => LogicalType.format(value)
        case LogicalType.Json => "string"
        case _ => t
      }
      flat += LanceSchema.FlatField(id, parent, name, plain, nullable, ext.map("ARROW:extension:name" -> _).toMap)
      id
    }
    val entries = scala.collection.mutable.Set.empty[Int]
    def children(nodes: Iterable[com.fasterxml.jackson.databind.JsonNode], parent: Int, parentType: LogicalType): Unit =
      nodes.foreach { n =>
        val t = n.get("type").asText()
        // A map's entries and their keys are never null; every other field may be.
        val required = parentType == LogicalType.Map || (entries.contains(parent) && n.get("name").asText() == "key")
        val id = add(n.get("name").asText(), t, !required, Option(n.get("extension")).map(_.asText()), parent)
        if (parentType == LogicalType.Map) entries += id
        children(n.get("children").asScala, id, LogicalType.parse(t))
      }
    val root = add(name, LogicalType.format(top), nullable, None, -1)
    children(json.readTree(text).asScala, root, top)
    LanceSchema.fromFlat(s"the Spark metadata of column '$name'", flat.result()).fields.head
  }.toOption.filter(sameSparkType).map(ArrowSchemas.toArrow)
}
