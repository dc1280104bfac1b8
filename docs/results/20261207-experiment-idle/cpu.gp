set terminal pngcairo size 1200,640 font 'sans,10'
set output 'cpu.png'
set title "CPU shares of the machine's busy time over the best pass's hold"
set grid ytics
set xtics rotate by -35
set bmargin 8
set ylabel '% of busy CPU'
set yrange [0:*]
set style fill solid 0.7 border -1
set style data histograms
set style histogram rowstacked
set boxwidth 0.7
set key outside right top
plot 'cpu.dat' using 2:xtic(1) title 'conduitd', \
     '' using 3 title 'nginx', \
     '' using 4 title 'PostgreSQL', \
     '' using 5 title 'generator', \
     '' using 6 title 'other'
