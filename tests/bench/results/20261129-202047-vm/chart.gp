set terminal pngcairo size 1280,720 font 'sans,10'
set termoption noenhanced
set output 'chart.png'
set grid ytics
set key inside top right vertical
set ylabel 'IOPS (median)'
set yrange [0:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -30 nomirror
set multiplot layout 1,2 title '4k IOPS by system and NBD connection count (rbdx-cN = N connections; median of rounds)'
$d0 << EOD
fio-rbd 6583 2262
rbdx-c1-io_uring 4015 1495
rbdx-c1-eventfd 3871 1269
qemu-nbd 3583 775
qsd 3621 851
EOD
set title 'QD1'
plot $d0 using 2:xtic(1) title 'randread-4k-qd1', $d0 using 3 title 'randwrite-4k-qd1'
$d1 << EOD
fio-rbd 15940 1674
rbdx-c1-io_uring 9856 1621
rbdx-c2-io_uring 8213 2182
rbdx-c4-io_uring 8959 1167
rbdx-c1-eventfd 7794 1288
rbdx-c2-eventfd 6152 1446
rbdx-c4-eventfd 8218 1602
qemu-nbd 4244 1101
qsd 4219 1066
EOD
set title 'QD>1'
plot $d1 using 2:xtic(1) title 'randread-4k-qd32', $d1 using 3 title 'randwrite-4k-qd32'
unset multiplot
