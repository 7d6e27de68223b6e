import io.trino.tpcds.Table;
import io.trino.tpcds.column.Column;
import io.trino.tpcds.column.ColumnType;

/**
 * Prints the TPC-DS schema as the generator (io.trino.tpcds) knows it: one line per column, "table column type",
 * the type in Spark SQL. Run with the generator's class path: `java -cp GENERATOR_JARS TpcdsSchema.java`.
 * Identifiers are 64-bit keys; CHAR and VARCHAR become STRING (the generator writes them unpadded); TIME, used by
 * dbgen_version alone, is a string too.
 */
public class TpcdsSchema {
    public static void main(String[] args) {
        for (Table table : Table.getBaseTables()) {
            for (Column column : table.getColumns()) {
                System.out.println(table.getName() + " " + column.getName() + " " + sparkType(column.getType()));
            }
        }
    }

    private static String sparkType(ColumnType type) {
        switch (type.getBase()) {
            case IDENTIFIER: return "BIGINT";
            case INTEGER: return "INT";
            case DATE: return "DATE";
            case DECIMAL: return "DECIMAL(" + type.getPrecision().get() + "," + type.getScale().get() + ")";
            case VARCHAR:
            case CHAR:
            case TIME: return "STRING";
            default: throw new IllegalArgumentException("no Spark type for the generator's type " + type.getBase());
        }
    }
}
