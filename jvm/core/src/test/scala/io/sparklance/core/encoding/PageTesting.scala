package io.sparklance.core.encoding

import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{BigIntVector, BitVector, DecimalVector, FieldVector, IntVector, VarCharVector}
import org.apache.arrow.vector.complex.{ListVector, StructVector}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}

import io.sparklance.proto.Encodings21Protos.PageLayout

/**
 * Whole 2.1/2.2 pages without the file around them: rows of a nested column as a small model, written to Arrow
 * vectors, shredded and encoded by the writer's page encoder, decoded by the reader's page decoders, and rebuilt
 * from the decoded levels and values into the model again.
 */
object PageTesting {
  /** A value of the model: null, a leaf value (Int, Long, Boolean or String), a struct of one child, or a list. */
  sealed trait V
  case object Nul extends V
  final case class Leaf(x: Any) extends V
  final case class Struct(child: V) extends V
  final case class Lst(items: Seq[V]) extends V

  /** A leaf type: how to make its vector, its shredder kind and width, random values, and how to read one back. */
  final case class LeafType(name: String, arrow: ArrowType, kind: Byte, width: Int, bitpackable: Boolean,
      shape: LeafShape, random: Random => Any, read: (DataBlock, Int) => Any)

  private def int32(r: Random): Any = if (r.nextBoolean()) r.nextInt(100) else r.nextInt()

  val Int32: LeafType = LeafType("int32", new ArrowType.Int(32, true), LeafShredder.FIXED, 4, bitpackable = true,
    LeafShape.fixed(32), int32, (b, i) => LittleEndian.getInt(EncodingTesting.fixed(b).data, 4 * i))
  val Int64: LeafType = LeafType("int64", new ArrowType.Int(64, true), LeafShredder.FIXED, 8, bitpackable = false,
    LeafShape.fixed(64), r => r.nextLong(), (b, i) => LittleEndian.getLong(EncodingTesting.fixed(b).data, 8 * i))
  val Bool: LeafType = LeafType("bool", ArrowType.Bool.INSTANCE, LeafShredder.BOOL, 1, bitpackable = false,
    LeafShape.fixed(1), r => r.nextBoolean(), (b, i) => Bits.get(EncodingTesting.fixed(b).data, i.toLong))

  /** Unscaled decimal128 values: mostly DECIMAL(7,2)-sized money, sometimes any 38 digits, negative or not. */
  private def decimal(r: Random): Any = {
    val unscaled = if (r.nextInt(8) == 0) BigInt(126, r) * (if (r.nextBoolean()) 1 else -1) else BigInt(r.nextInt(2000000) - 1000000)
    new java.math.BigDecimal(unscaled.bigInteger, 2)
  }

  private def readDecimal(b: DataBlock, i: Int): Any = {
    val le = java.util.Arrays.copyOfRange(EncodingTesting.fixed(b).data, 16 * i, 16 * i + 16)
    new java.math.BigDecimal(new java.math.BigInteger(le.reverse), 2)
  }

  val Dec128: LeafType = LeafType("decimal128", new ArrowType.Decimal(38, 2, 128), LeafShredder.FIXED, 16,
    bitpackable = false, LeafShape.fixed(128), decimal, readDecimal)

  private def readString(b: DataBlock, i: Int): Any = b match {
    case v: DataBlock.VariableWidth => new String(v.data, v.offset(i).toInt, (v.offset(i + 1) - v.offset(i)).toInt, UTF_8)
    case other => throw new AssertionError(s"expected strings, got ${other.getClass.getSimpleName}")
  }

  /** Short strings (mini-block pages). */
  val Str: LeafType = LeafType("string", ArrowType.Utf8.INSTANCE, LeafShredder.VARIABLE, 32, bitpackable = false,
    LeafShape.variable(32), r => Seq("", "a", "bb", "lance", "ünïcode", "x" * 40)(r.nextInt(6)), readString)
  /** Long strings (full-zip pages: values of 256 bytes or more). */
  val LongStr: LeafType = LeafType("long string", ArrowType.Utf8.INSTANCE, LeafShredder.VARIABLE, 32, bitpackable = false,
    LeafShape.variable(32), longString, readString)

  private def longString(r: Random): String =
    if (r.nextInt(4) == 0) "" else new String(Array.fill(256 + r.nextInt(200))(('a' + r.nextInt(26)).toChar))

  /** A column: its layers from the top (STRUCT or LIST) down to its leaf. */
  final case class Column(layers: Seq[Byte], leaf: LeafType) {
    val kinds: Array[Byte] = (layers :+ LeafShredder.LEAF).toArray
    val names: Array[String] = kinds.indices.map(k => s"f$k").toArray
    override def toString: String =
      layers.map(k => if (k == LeafShredder.LIST) "list<" else "struct<").mkString + leaf.name + ">" * layers.size
  }

  /** Random rows: about `nullRate` of values at each layer null; outermost lists of 0 to `maxLen` items, others 0 to 4. */
  def rows(c: Column, r: Random, n: Int, nullRate: Double, maxLen: Int = 4): Seq[V] = {
    def gen(k: Int): V =
      if (r.nextDouble() < nullRate) Nul
      else c.kinds(k) match {
        case LeafShredder.LEAF => Leaf(c.leaf.random(r))
        case LeafShredder.STRUCT => Struct(gen(k + 1))
        case _ => Lst(IndexedSeq.fill(r.nextInt((if (k == 0) maxLen else 4) + 1))(gen(k + 1)))
      }
    IndexedSeq.fill(n)(gen(0))
  }

  def vector(c: Column, allocator: BufferAllocator, rows: Seq[V]): FieldVector = {
    def field(k: Int): Field = c.kinds(k) match {
      case LeafShredder.LEAF => new Field(c.names(k), FieldType.nullable(c.leaf.arrow), null)
      case LeafShredder.STRUCT => new Field(c.names(k), FieldType.nullable(ArrowType.Struct.INSTANCE), List(field(k + 1)).asJava)
      case _ => new Field(c.names(k), FieldType.nullable(ArrowType.List.INSTANCE), List(field(k + 1)).asJava)
    }
    val top = field(0).createVector(allocator)
    top.allocateNew()
    def write(v: FieldVector, i: Int, value: V): Unit = (v, value) match {
      case (_, Nul) =>
        v match {
          case s: StructVector => s.setNull(i)
          case l: ListVector => l.setNull(i)
          case _ => // a leaf: unset slots are null
        }
      case (s: StructVector, Struct(child)) =>
        s.setIndexDefined(i)
        write(s.getChildrenFromFields.get(0), i, child)
      case (l: ListVector, Lst(items)) =>
        val start = l.startNewValue(i)
        items.zipWithIndex.foreach { case (item, j) => write(l.getDataVector, start + j, item) }
        l.endValue(i, items.size)
      case (iv: IntVector, Leaf(x: Int)) => iv.setSafe(i, x)
      case (bv: BigIntVector, Leaf(x: Long)) => bv.setSafe(i, x)
      case (bv: BitVector, Leaf(x: Boolean)) => bv.setSafe(i, if (x) 1 else 0)
      case (sv: VarCharVector, Leaf(x: String)) => sv.setSafe(i, x.getBytes(UTF_8))
      case (dv: DecimalVector, Leaf(x: java.math.BigDecimal)) => dv.setSafe(i, x)
      case other => throw new IllegalArgumentException(s"cannot write $other")
    }
    rows.zipWithIndex.foreach { case (v, i) => write(top, i, v) }
    top.setValueCount(rows.size)
    top
  }

  def shredder(c: Column): LeafShredder = new LeafShredder(c.kinds, c.names, c.leaf.kind, c.leaf.width, null)

  def slices(p: StructuralPageEncoder.Page): Array[Slice] = p.buffers.map { b =>
    val a = new Array[Byte](b.remaining()); b.duplicate().get(a); Slice.of(a)
  }

  /** Decodes a page of `rows` rows with the decoder its layout names. */
  def decode(layout: PageLayout, buffers: Array[Slice], rows: Long, shape: LeafShape, maxBytes: Long = 64L << 20): MiniBlockPage.Decoded =
    layout.getLayoutCase match {
      case PageLayout.LayoutCase.MINI_BLOCK_LAYOUT => MiniBlockPage.decode(layout.getMiniBlockLayout, buffers, maxBytes)
      case PageLayout.LayoutCase.FULL_ZIP_LAYOUT => FullZipPage.decode(layout.getFullZipLayout, buffers, shape, maxBytes)
      case PageLayout.LayoutCase.CONSTANT_LAYOUT => ConstantPage.decode(layout.getConstantLayout, buffers, rows, shape, maxBytes)
      case other => throw new AssertionError(s"unexpected layout $other")
    }

  /** Rebuilds the rows of a column from its levels and its visible values, innermost layer first. */
  def rebuild(c: Column, levels: RepDef.Composite, values: DataBlock): Seq[V] = {
    val block = Blocks.materialize(values)
    val n = block.numValues
    val leafValidity = levels.unravelValidity(n)
    var current: Seq[V] = (0 until n).map(i => if (leafValidity.isValid(i)) Leaf(c.leaf.read(block, i)) else Nul)
    for (k <- c.layers.indices.reverse) {
      if (c.layers(k) == LeafShredder.STRUCT) {
        val validity = levels.unravelValidity(current.size)
        current = current.indices.map(i => if (validity.isValid(i)) Struct(current(i)) else Nul)
      } else {
        val o = levels.unravelOffsets()
        val items = current
        current = (0 until o.count).map { i =>
          if (o.validity.isValid(i)) Lst(items.slice(o.offsets(i).toInt, o.offsets(i + 1).toInt)) else Nul
        }
      }
    }
    current
  }

  /** One page decoded and sliced to rows [from, to) of it, as the reader does per batch. */
  def sliced(d: MiniBlockPage.Decoded, from: Int, to: Int): (RepDef.Unraveler, DataBlock) = {
    val s = d.levels.slice(from, to)
    val items = s(1).asInstanceOf[Array[Int]]
    (s(0).asInstanceOf[RepDef.Unraveler], Blocks.materialize(Blocks.slice(d.values, items(0), items(1))))
  }
}
