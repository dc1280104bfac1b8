set terminal pngcairo size 1200,640 font 'sans,10'
set output 'reference.png'
set title "Users passed per core: here (median, range of the repeats) and published (per vCPU)"
set grid ytics
set xtics rotate by -35
set bmargin 8
set ylabel 'users per core'
set yrange [0:*]
set style fill solid 0.7 border -1
set boxwidth 0.6
set offsets 0.5, 0.5, 0, 0
set bmargin 14
plot 'reference.dat' using 0:($5 == 1 ? $2 : 1/0):xtic(1) with boxes lc rgb '#1f77b4' title 'here', \
     '' using 0:($5 == 2 ? $2 : 1/0) with boxes lc rgb '#999999' title 'published', \
     '' using 0:($5 == 3 ? $2 : 1/0) with boxes lc rgb '#dddddd' title 'derived from the published 1-to-8 scaling', \
     '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt 0 notitle
